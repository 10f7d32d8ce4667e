import fc from 'fast-check';

import type { ObserveBehaviour } from '../../helpers/fake-module.js';
import { expectError, urnOf } from '../../helpers/fake-steward.js';
import { call, type JsonResponse } from '../../helpers/harness.js';
import {
  expectAgreement,
  expectedFacts,
  expectedOperation,
  factsOf,
  operationFactsOf,
} from './agreement.js';
import { expectAudited, write } from './automation.js';
import type { Configs, Model, ObserveOutcome, Outcome } from './design.js';
import * as design from './design.js';
import type { ModelSteward, ModuleCall } from './steward.js';
import type { ExpectedCall } from './worker.js';
import * as worker from './worker.js';

/**
 * The commands of the state machine test: each one acts on the model (model-design.ts,
 * model-worker.ts) and on the real Steward (model-steward.ts), checks the answer, then
 * checks that the two agree (model-agreement.ts). Builders take fixed parameters, so a
 * known sequence can be replayed; `COMMANDS` draws them at random.
 */

export const NAMES = ['a', 'b', 'c'];
/** The fixed tree of the cascade (§11): `c` always names `a` as its parent. */
export const PARENTS: Readonly<Record<string, string>> = { c: 'a' };
export const LEASE_MS = 2_000;
export const MAX_ATTEMPTS = 3;
export const DEPENDENCY_POLL_MS = 1_000;

export type Command = fc.AsyncCommand<Model, ModelSteward>;
export type IfMatch = 'none' | 'current' | 'stale';

/** What the runs did, for the report. */
export const counts = {
  runs: 0,
  commands: 0,
  requests: 0,
  denied: 0,
  syncs: 0,
  interrupted: 0,
  /** Dependents waiting in the round that completed their parent: woken at once, or left to the poll. */
  sameRoundWakes: { now: 0, polled: 0 },
};
/** How often each request met each status and what it answered: the rows of §4 the runs exercised. */
export const rowsSeen = new Map<string, number>();

export function command(
  describe: string,
  run: (m: Model, r: ModelSteward) => Promise<void>,
  check: (m: Readonly<Model>) => boolean = () => true,
): Command {
  return {
    check,
    async run(m, r) {
      counts.commands += 1;
      await run(m, r);
      await expectAgreement(
        m,
        r,
        NAMES.map((n) => urnOf(n)),
      );
    },
    toString: () => describe,
  };
}

// ---- requests ----

export const create = (c: {
  name: string;
  configs: Partial<Configs>;
  labels?: Record<string, string>;
  importing?: boolean;
}) =>
  command(
    `${c.importing ? 'import' : 'create'} ${c.name} ${JSON.stringify(c.configs)}${c.labels ? ` labels ${JSON.stringify(c.labels)}` : ''}`,
    async (m, r) => {
      const urn = urnOf(c.name);
      const parentName = PARENTS[c.name];
      const parent = parentName === undefined ? undefined : urnOf(parentName);
      const row = `${c.importing ? 'import' : 'create'} ${sourceOf(m, urn)}${parent ? `, parent ${sourceOf(m, parent)}` : ''}`;
      const body = {
        kind: 'fake',
        project: 'p',
        name: c.name,
        labels: c.labels,
        spec: { configs: c.configs, ...(parent && { dependencies: { parent } }) },
        ...(c.importing && { import: true }),
      };
      expectAnswer(
        m,
        row,
        design.create(m, urn, c.configs, c.labels, { importing: c.importing, parent }),
        await write(m, 'POST', `${r.api}/resources`, body),
      );
    },
  );

/** What PATCH and PUT are given: configs and labels, an If-Match, a dry run or not. */
interface SpecWrite {
  name: string;
  configs?: Partial<Configs>;
  labels?: Record<string, string>;
  ifMatch: IfMatch;
  dryRun: boolean;
}

/** A PATCH or a PUT of `c`: the model's answer and the request's method and body come from `request`. */
const specWrite = (
  verb: 'patch' | 'apply',
  c: SpecWrite,
  request: (
    m: Model,
    urn: string,
    version: number | undefined,
  ) => { answer: design.Answer; method: string; body: unknown },
) =>
  command(
    `${verb} ${c.name} ${JSON.stringify({ configs: c.configs, labels: c.labels })} if-match:${c.ifMatch}${c.dryRun ? ' dry-run' : ''}`,
    async (m, r) => {
      const urn = urnOf(c.name);
      const version = ifMatchOf(m, urn, c.ifMatch);
      const row = `${verb}${c.dryRun ? ' (dry run)' : ''} ${sourceOf(m, urn, c.ifMatch)}`;
      const { answer, method, body } = request(m, urn, version);
      const res = await write(
        m,
        method,
        `${r.api}/resources/${urn}${c.dryRun ? '?dry_run=true' : ''}`,
        body,
        headersOf(version),
      );
      // An apply with nothing to change answers the resource, dry run or not.
      expectAnswer(m, row, answer, res, c.dryRun && !(answer.ok && answer.unchanged));
    },
  );

export const patch = (c: SpecWrite) =>
  specWrite('patch', c, (m, urn, version) => ({
    answer: design.update(m, urn, { configs: c.configs, labels: c.labels }, version),
    method: 'PATCH',
    body: {
      ...(c.configs ? { configs: c.configs } : {}),
      ...(c.labels ? { labels: c.labels } : {}),
    },
  }));

/** PUT (§13): the whole resource; `c` names `a` as its parent as its create does. */
export const apply = (c: SpecWrite & { configs: Partial<Configs> }) =>
  specWrite('apply', c, (m, urn, version) => {
    const parentName = PARENTS[c.name];
    const parent = parentName === undefined ? undefined : urnOf(parentName);
    return {
      answer: design.apply(m, urn, c.configs, c.labels, parent, version),
      method: 'PUT',
      body: {
        kind: 'fake',
        project: 'p',
        name: c.name,
        labels: c.labels,
        spec: { configs: c.configs, ...(parent && { dependencies: { parent } }) },
      },
    };
  });

export const bump = (c: {
  name: string;
  by: number;
  ifMatch: IfMatch;
  via: 'actions' | 'execute';
}) =>
  command(`bump ${c.name} by ${c.by} if-match:${c.ifMatch} via ${c.via}`, async (m, r) => {
    const urn = urnOf(c.name);
    const version = ifMatchOf(m, urn, c.ifMatch);
    const row = `bump ${sourceOf(m, urn, c.ifMatch)}`;
    const answer = design.bump(m, urn, c.by, version);
    const res =
      c.via === 'actions'
        ? await write(
            m,
            'POST',
            `${r.api}/resources/${urn}/actions/bump`,
            { by: c.by },
            headersOf(version),
          )
        : await write(
            m,
            'POST',
            `${r.api}/resources/${urn}/execute`,
            { action: 'bump', params: { by: c.by } },
            headersOf(version),
          );
    expectAnswer(m, row, answer, res);
  });

/**
 * DELETE, or the same through `actions/delete` or `execute` (decisions.md: exactly DELETE);
 * with `?orphan=true` and `?cascade=true` (§11) through DELETE only.
 */
export const remove = (c: {
  name: string;
  ifMatch: IfMatch;
  via: 'DELETE' | 'actions' | 'execute';
  orphan?: boolean;
  cascade?: boolean;
}) =>
  command(
    `delete ${c.name} if-match:${c.ifMatch} via ${c.via}${c.orphan ? ' orphan' : ''}${c.cascade ? ' cascade' : ''}`,
    async (m, r) => {
      const urn = urnOf(c.name);
      const version = ifMatchOf(m, urn, c.ifMatch);
      const kind = c.orphan ? 'orphan' : 'delete';
      const row = `${c.cascade ? `cascade ${kind}` : kind} ${sourceOf(m, urn, c.ifMatch)}${dependentsNote(m, urn)}`;
      const answer = c.cascade
        ? design.removeCascade(m, urn, version, Boolean(c.orphan))
        : design.remove(m, urn, version, { orphan: c.orphan });
      const query = [c.orphan && 'orphan=true', c.cascade && 'cascade=true'].filter(Boolean);
      const res =
        c.via === 'DELETE'
          ? await write(
              m,
              'DELETE',
              `${r.api}/resources/${urn}${query.length ? `?${query.join('&')}` : ''}`,
              undefined,
              headersOf(version),
            )
          : c.via === 'actions'
            ? await write(
                m,
                'POST',
                `${r.api}/resources/${urn}/actions/delete`,
                undefined,
                headersOf(version),
              )
            : await write(
                m,
                'POST',
                `${r.api}/resources/${urn}/execute`,
                { action: 'delete' },
                headersOf(version),
              );
      expectAnswer(m, row, answer, res);
    },
  );

/** pause or resume (§11): from any status, the flag only. */
export const pause = (c: { name: string; paused: boolean }) =>
  command(`${c.paused ? 'pause' : 'resume'} ${c.name}`, async (m, r) => {
    const urn = urnOf(c.name);
    const resource = m.resources.get(urn);
    const row = `${c.paused ? 'pause' : 'resume'} ${sourceOf(m, urn)}${resource ? (resource.paused ? ' paused' : ' running') : ''}`;
    expectAnswer(
      m,
      row,
      design.setPaused(m, urn, c.paused),
      await write(m, 'POST', `${r.api}/resources/${urn}/${c.paused ? 'pause' : 'resume'}`),
    );
  });

/** refresh (§11): the worker observes the backend and records the drift. */
export const refresh = (c: { name: string; ifMatch: IfMatch }) =>
  command(`refresh ${c.name} if-match:${c.ifMatch}`, async (m, r) => {
    const urn = urnOf(c.name);
    const version = ifMatchOf(m, urn, c.ifMatch);
    const res = await write(
      m,
      'POST',
      `${r.api}/resources/${urn}/refresh`,
      undefined,
      headersOf(version),
    );
    expectAnswer(m, `refresh ${sourceOf(m, urn, c.ifMatch)}`, design.refresh(m, urn, version), res);
  });

export const retry = (c: { name: string; ifMatch: IfMatch }) =>
  command(`retry ${c.name} if-match:${c.ifMatch}`, async (m, r) => {
    const urn = urnOf(c.name);
    const version = ifMatchOf(m, urn, c.ifMatch);
    const res = await write(
      m,
      'POST',
      `${r.api}/resources/${urn}/retry`,
      undefined,
      headersOf(version),
    );
    expectAnswer(m, `retry ${sourceOf(m, urn, c.ifMatch)}`, design.retry(m, urn, version), res);
  });

/** Cancel the URN's newest operation, its oldest one, or an id that was never issued. */
export const cancel = (c: { name: string; which: 'newest' | 'oldest' | 'unknown' }) => {
  const pick = (m: Readonly<Model>): string | undefined => {
    const operations = m.operations.filter((op) => op.urn === urnOf(c.name));
    return c.which === 'unknown'
      ? 'op_00000000000000zzzzzzzz'
      : (c.which === 'newest' ? operations.at(-1) : operations[0])?.id;
  };
  return command(
    `cancel the ${c.which} operation of ${c.name}`,
    async (m, r) => {
      const id = pick(m)!;
      const row = `cancel ${m.operations.find((op) => op.id === id)?.status ?? 'unknown'} operation`;
      expectAnswer(
        m,
        row,
        design.cancel(m, id),
        await write(m, 'POST', `${r.api}/operations/${id}/cancel`),
      );
    },
    (m) => pick(m) !== undefined,
  );
};

// ---- the module, the worker, time, restarts and crashes ----

export const script = (c: { name: string; outcomes: Outcome[] }) =>
  command(`script ${c.name}: ${c.outcomes.map((o) => o.type).join(', ')}`, async (m, r) => {
    const urn = urnOf(c.name);
    m.scripts.set(urn, [...(m.scripts.get(urn) ?? []), ...c.outcomes]);
    r.script(urn, ...c.outcomes);
  });

/** What the fake's observe does for each modelled outcome. */
const OBSERVE_BEHAVIOURS: Record<ObserveOutcome, ObserveBehaviour> = {
  exists: { type: 'default' },
  missing: { type: 'result', result: { exists: false } },
  throw: { type: 'throw', message: design.OBSERVE_FAILURE },
};

export const scriptObserve = (c: { name: string; outcomes: ObserveOutcome[] }) =>
  command(`script ${c.name}'s observe: ${c.outcomes.join(', ')}`, async (m, r) => {
    const urn = urnOf(c.name);
    m.observeScripts.set(urn, [...(m.observeScripts.get(urn) ?? []), ...c.outcomes]);
    r.scriptObserve(urn, ...c.outcomes.map((o) => OBSERVE_BEHAVIOURS[o]));
  });

export const step = () =>
  command('worker step', async (m, r) => {
    const { claimed, calls } = await r.step();
    const { sameRoundWakes, ...expected } = worker.workerStep(
      m,
      new Set(calls.map((call) => call.urn)),
    );
    counts.syncs += calls.length;
    expect({ claimed, calls: callsOf(calls) }).toEqual(expected);
    // The one place the dialects differ (worker.ts): woken now, or after the poll; the model takes what happened.
    for (const urn of sameRoundWakes) {
      const res = await call('GET', `${r.api}/resources/${urn}`);
      const dueAtMs = Date.parse(res.body.state.sync.next_sync_at);
      expect([m.nowMs, m.nowMs + m.dependencyPollMs]).toContain(dueAtMs);
      m.resources.get(urn)!.dueAtMs = dueAtMs;
      counts.sameRoundWakes[dueAtMs === m.nowMs ? 'now' : 'polled'] += 1;
    }
  });

/** A worker round with requests arriving while its syncs run; the syncs end with ok after the requests. */
export const stepWith = (requests: Command[]) =>
  command(
    `worker step with [${requests.join('; ')}] during its syncs`,
    async (m, r) => {
      const expected = worker.startRound(m);
      const { claimed, calls } = await r.stepAround(expected.length, async () => {
        for (const request of requests) if (request.check(m)) await request.run(m, r);
      });
      worker.finishRound(m, expected);
      counts.syncs += calls.length;
      expect({ claimed, calls: callsOf(calls) }).toEqual({
        claimed: expected.length,
        calls: expected,
      });
    },
    worker.everyDueCallsModule,
  );

export const tick = (ms: number) =>
  command(`${ms} ms pass`, async (m, r) => {
    m.nowMs += ms;
    r.advance(ms);
  });

/** Each incarnation's audit entries are read before it ends (a killed one's unwritten batch would be lost). */
export const restart = () =>
  command('restart', async (m, r) => {
    await expectAudited(m, r);
    await r.restart();
  });

export const interrupt = (how: 'killed' | 'stopped' | 'frozen') =>
  command(
    `worker step, ${how} mid-sync, a new Steward`,
    async (m, r) => {
      await expectAudited(m, r);
      const expected = worker.interruptedStep(m, how);
      const calls = await r.interrupt(how, expected.length);
      counts.interrupted += 1;
      expect(callsOf(calls)).toEqual(expected);
    },
    // A held round holds module calls: a wait or an orphan would write back while it is held.
    (m) => (how !== 'frozen' || m.frozen === null) && worker.everyDueCallsModule(m),
  );

export const thaw = () =>
  command(
    'the frozen Steward carries on',
    async (m, r) => {
      worker.thaw(m);
      await r.thaw();
    },
    (m) => m.frozen !== null,
  );

// ---- random commands ----

const name = fc.constantFrom(...NAMES);
const value = fc.oneof(
  { arbitrary: fc.constantFrom(0, 1, 2), weight: 6 },
  { arbitrary: fc.constant(design.REFUSED_VALUE), weight: 1 },
);
export const configs: fc.Arbitrary<Partial<Configs>> = fc.record(
  { steps: fc.integer({ min: 1, max: 3 }), value },
  { requiredKeys: [] },
);
const labels = fc.option(
  fc.constantFrom<Record<string, string>>({}, { team: 'x' }, { team: 'y' }),
  { nil: undefined },
);
const ifMatch = fc.constantFrom<IfMatch>('none', 'current', 'stale');
/** ok is what an unscripted call does anyway, so failures are scripted more often. */
const outcome: fc.Arbitrary<Outcome> = fc.oneof(
  { arbitrary: fc.constant({ type: 'ok' as const }), weight: 1 },
  {
    arbitrary: fc.constantFrom(0, 1_000).map((ms) => ({ type: 'requeue' as const, ms })),
    weight: 2,
  },
  { arbitrary: fc.constant({ type: 'throw' as const, message: 'the backend flaked' }), weight: 3 },
  {
    arbitrary: fc.constant({ type: 'terminal' as const, message: 'the backend refused' }),
    weight: 2,
  },
);

const createOf = (
  names: fc.Arbitrary<string>,
  importing: fc.Arbitrary<boolean> = fc.constant(false),
) => fc.record({ name: names, configs, labels, importing }).map(create);
const requests = [
  createOf(name, fc.constantFrom(false, false, false, true)),
  fc
    .record({
      name,
      configs: fc.option(configs, { nil: undefined }),
      labels,
      ifMatch,
      dryRun: fc.constantFrom(false, false, false, false, true),
    })
    .map(patch),
  fc
    .record({
      name,
      by: fc.constantFrom(0, 1, 2),
      ifMatch,
      via: fc.constantFrom('actions' as const, 'execute' as const),
    })
    .map(bump),
  fc
    .record({
      name,
      ifMatch,
      via: fc.constantFrom('DELETE' as const, 'actions' as const, 'execute' as const),
    })
    .map(remove),
  fc
    .record({
      name,
      ifMatch,
      orphan: fc.boolean(),
      cascade: fc.constantFrom(false, true, true),
      via: fc.constant('DELETE' as const),
    })
    .map(remove),
  fc.record({ name, paused: fc.boolean() }).map(pause),
  fc.record({ name, ifMatch }).map(refresh),
  fc.record({ name, ifMatch }).map(retry),
  fc
    .record({
      name,
      which: fc.constantFrom(
        'newest' as const,
        'newest' as const,
        'oldest' as const,
        'unknown' as const,
      ),
    })
    .map(cancel),
  fc
    .record({
      name,
      configs,
      labels,
      ifMatch: fc.constantFrom<IfMatch>('none', 'none', 'current', 'stale'),
      dryRun: fc.constantFrom(false, false, false, true),
    })
    .map(apply),
];

/** Each run starts by creating every resource (a random create each), so few requests meet an empty store. */
export const PRELUDE = fc.tuple(...NAMES.map((n) => createOf(fc.constant(n))));

/** Every command with its weight: enough creates and worker steps that most requests meet a resource. */
export const COMMANDS: Array<fc.Arbitrary<Command>> = weighted([
  [requests[0]!, 4],
  [requests[1]!, 2],
  [requests[2]!, 1],
  [requests[3]!, 2],
  [requests[4]!, 1],
  [requests[5]!, 2],
  [requests[6]!, 2],
  [requests[7]!, 1],
  [requests[8]!, 2],
  [requests[9]!, 2],
  [fc.record({ name, outcomes: fc.array(outcome, { minLength: 1, maxLength: 3 }) }).map(script), 2],
  [
    fc
      .record({
        name,
        outcomes: fc.array(fc.constantFrom<ObserveOutcome>('exists', 'missing', 'throw'), {
          minLength: 1,
          maxLength: 2,
        }),
      })
      .map(scriptObserve),
    1,
  ],
  [fc.constant(null).map(step), 5],
  [fc.array(fc.oneof(...requests), { minLength: 1, maxLength: 2 }).map(stepWith), 3],
  [fc.constantFrom(500, LEASE_MS).map(tick), 2],
  [fc.constant(null).map(restart), 1],
  [fc.constantFrom('killed' as const, 'stopped' as const, 'frozen' as const).map(interrupt), 2],
  [fc.constant(null).map(thaw), 1],
]);

export function weighted(
  entries: Array<[fc.Arbitrary<Command>, number]>,
): Array<fc.Arbitrary<Command>> {
  return entries.flatMap(([arbitrary, weight]) => Array.from({ length: weight }, () => arbitrary));
}

// ---- answers ----

/** Where a request finds its resource ("PENDING delete" while a delete runs), and whether its If-Match is stale: a row of §4. */
function sourceOf(m: Model, urn: string, ifMatch: IfMatch = 'none'): string {
  const resource = m.resources.get(urn);
  const status = !resource
    ? 'absent'
    : resource.status === 'PENDING' && resource.action === 'delete'
      ? 'PENDING delete'
      : resource.status;
  return ifMatch === 'stale' ? `${status}, stale If-Match` : status;
}

/** A removal met by dependents: the rows of §11 the cascade and the dependents' refusal are about. */
function dependentsNote(model: Model, urn: string): string {
  return design.dependentsOf(model, urn).length ? ' with dependents' : '';
}

function ifMatchOf(model: Model, urn: string, ifMatch: IfMatch): number | undefined {
  const version = model.resources.get(urn)?.version ?? 1;
  return ifMatch === 'none' ? undefined : ifMatch === 'current' ? version : version - 1;
}

const headersOf = (version: number | undefined): Record<string, string> =>
  version === undefined ? {} : { 'if-match': `"${version}"` };

/**
 * Checks a request's answer against the model's. On acceptance the model takes the new
 * operation, and the answer's documents must be the model's: the operation (a 202's
 * `{resource, operation}`, or cancel's 200 with the operation itself) and the resource.
 */
function expectAnswer(
  m: Model,
  row: string,
  answer: design.Answer,
  res: JsonResponse,
  dryRun = false,
): void {
  counts.requests += 1;
  const key = `${row} → ${answer.ok && dryRun ? 200 : answer.status}${answer.ok ? '' : ` ${answer.code}`}`;
  rowsSeen.set(key, (rowsSeen.get(key) ?? 0) + 1);
  if (!answer.ok) {
    counts.denied += 1;
    expectError(res, answer.status, answer.code);
    // §4: a request the status does not allow answers 409 naming the requests it does allow.
    for (const allowed of answer.allowed ?? [])
      expect(res.body.error.message).toMatch(new RegExp(`\\b${allowed}\\b`));
    if (answer.allowed)
      expect([...res.body.error.details.allowed].sort()).toEqual([...answer.allowed].sort());
    // §11: a removal refused for its dependents names them.
    if (answer.dependents) expect(res.body.error.details.dependents).toEqual(answer.dependents);
    return;
  }
  if (answer.unchanged) {
    // An apply with nothing to change (§13): the resource as stored, no operation.
    expect(res.status).toBe(200);
    expect(factsOf(res.body)).toEqual(expectedFacts(m.resources.get(res.body.urn)!));
    return;
  }
  if (answer.flag) {
    // Pause and resume: 200 `{resource, operation}`, or `{resource}` alone when nothing changed.
    expect({ status: res.status, operation: res.body.operation === undefined }).toEqual({
      status: 200,
      operation: answer.flag === 'unchanged',
    });
    const urn = res.body.resource.urn;
    if (answer.flag === 'changed') acceptedAs(m, answer, res.body.operation);
    expect(factsOf(res.body.resource)).toEqual(expectedFacts(m.resources.get(urn)!));
    return;
  }
  expect({ status: res.status, error: res.body?.error?.code, dry_run: res.body?.dry_run }).toEqual({
    status: dryRun ? 200 : answer.status,
    error: undefined,
    dry_run: dryRun ? true : undefined,
  });
  if (dryRun) return;
  if (answer.cascade) {
    // §11: the dependents' deletes in deletion order, each accepted before what it depends on.
    expect((res.body.cascade ?? []).map((c: any) => c.resource.urn)).toEqual(
      answer.cascade.map((c) => c.urn),
    );
    answer.cascade.forEach((c, i) => acceptedAs(m, c.answer, res.body.cascade[i].operation));
    answer.cascade.forEach((c, i) =>
      expect(factsOf(res.body.cascade[i].resource)).toEqual(expectedFacts(m.resources.get(c.urn)!)),
    );
  } else expect(res.body.cascade).toBeUndefined();
  const operation = answer.status === 200 ? res.body : res.body.operation;
  acceptedAs(m, answer, operation);
  if (answer.status === 202)
    expect(factsOf(res.body.resource)).toEqual(expectedFacts(m.resources.get(operation.urn)!));
}

/** The model takes an accepted answer's operation, and the answer's operation document must be the model's. */
function acceptedAs(m: Model, answer: design.Answer, operation: any): void {
  if (!answer.ok) throw new Error('model: accepting a refused answer');
  if (answer.sameOperation) expect(operation.id).toBe(answer.sameOperation);
  answer.accept(operation.id);
  const modelled = m.operations.find((op) => op.id === operation.id);
  expect(modelled && operationFactsOf(operation)).toEqual(modelled && expectedOperation(modelled));
}

const callsOf = (calls: ModuleCall[]): ExpectedCall[] =>
  calls
    .map(({ urn, action, version, operationId, via }) => ({
      urn,
      action,
      version,
      operationId,
      via,
    }))
    .sort((a, b) => (a.urn < b.urn ? -1 : 1));
