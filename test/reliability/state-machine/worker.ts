import {
  dependentsOf,
  finish,
  type Model,
  type ModelResource,
  OBSERVE_FAILURE,
  type ObserveOutcome,
  type Outcome,
} from './design.js';
import { dropSchedulesOf } from './schedules.js';

/**
 * The sync loop in the model of docs/design.md §4 (model-design.ts): which resources a worker
 * claims (§6 due work), what each sync outcome writes (§5, and decisions.md on the two
 * attempt counters), and which write-backs of interrupted or frozen workers count
 * (§6 fencing). And §11: a paused resource is not claimed (an orphan is); a removal waits
 * while others depend on it, and an orphan then goes without a module call; anything else waits
 * while its parent is not COMPLETED; an import or a refresh calls `observe`, not `sync`.
 */

/** The sync call a worker makes: the module sees these. */
export interface ExpectedCall {
  urn: string;
  action: string;
  version: number;
  operationId: string;
  via: 'sync' | 'observe';
}

/** What a claimed resource does in its round: a module call, a wait, or (an orphan) its removal. */
type Move = 'sync' | 'observe' | 'waiting' | 'orphaned';

/** The completions and removals of one batch of write-backs: they wake who waits on them. */
interface Wakes {
  completed: string[];
  freed: string[];
}

/** Due work: PENDING, due now, no lease that is still running, and not paused (unless an orphan). */
export function dueNow(model: Model): string[] {
  return [...model.resources]
    .filter(
      ([, r]) =>
        r.status === 'PENDING' &&
        r.dueAtMs !== null &&
        r.dueAtMs <= model.nowMs &&
        (r.leaseUntilMs ?? 0) <= model.nowMs &&
        (!r.paused || r.action === 'orphan'),
    )
    .map(([urn]) => urn)
    .sort();
}

const removes = (action: string) => action === 'delete' || action === 'orphan';
const observing = (action: string) => action === 'import' || action === 'refresh';

/** What the worker finds for a claimed resource, read before any write-back of its round. */
function moveOf(model: Model, urn: string, resource: ModelResource): Move {
  if (removes(resource.action)) {
    if (dependentsOf(model, urn).length) return 'waiting';
    return resource.action === 'orphan' ? 'orphaned' : 'sync';
  }
  const parent = resource.parent === null ? undefined : model.resources.get(resource.parent);
  if (parent && parent.status !== 'COMPLETED') return 'waiting';
  return observing(resource.action) ? 'observe' : 'sync';
}

/** A dependent (not a removal) whose parent is COMPLETED now. */
function parentCompleted(model: Model, resource: ModelResource): boolean {
  if (removes(resource.action) || resource.parent === null) return false;
  return model.resources.get(resource.parent)?.status === 'COMPLETED';
}

/** True when every due resource would call the module: the rounds held mid-call need that. */
export function everyDueCallsModule(model: Model): boolean {
  return dueNow(model).every((urn) => {
    const move = moveOf(model, urn, model.resources.get(urn)!);
    return move === 'sync' || move === 'observe';
  });
}

/**
 * One worker round: every due resource is claimed (its operation starts running), then each
 * does its move with its next scripted outcome; the write-backs wake who waits on them.
 *
 * `called`: the resources the real round called the module for. A dependent reads its parent when
 * its own sync starts: on PostgreSQL the pool may have committed the parent's write-back of the
 * same round by then, and the dependent, found waiting at its claim, syncs in this round instead.
 * The model takes what happened, for a parent that this round completed (the CI run of b18692d
 * met it once: seed 1191224564).
 */
export function workerStep(
  model: Model,
  called: ReadonlySet<string> = new Set(),
): {
  claimed: number;
  calls: ExpectedCall[];
  sameRoundWakes: string[];
} {
  const due = dueNow(model);
  const round = due.map((urn) => {
    const resource = model.resources.get(urn)!;
    return { urn, resource, call: claim(model, resource, urn) };
  });
  const moves = round.map(({ urn, resource, call }) => ({
    urn,
    resource,
    call,
    move: moveOf(model, urn, resource),
  }));
  const wakes: Wakes = { completed: [], freed: [] };
  for (const entry of moves) {
    const { urn, resource } = entry;
    if (entry.move === 'waiting' && called.has(urn) && parentCompleted(model, resource))
      entry.move = moveOf(model, urn, resource);
    const { move } = entry;
    if (move === 'waiting') waited(model, resource);
    else if (move === 'orphaned') removed(model, urn, resource, wakes);
    else if (move === 'observe')
      observed(model, urn, resource, model.observeScripts.get(urn)?.shift() ?? 'exists', wakes);
    else written(model, urn, resource, model.scripts.get(urn)?.shift() ?? { type: 'ok' }, wakes);
  }
  // A dependent that starts waiting in the round that completes its parent, or a removal that starts
  // waiting in the round that removes its last dependent: SQLite wakes it at once, PostgreSQL's
  // one-statement write-back does not (it waits the poll); the step reads which.
  const sameRoundWakes = moves
    .filter(
      ({ urn, move, resource }) =>
        move === 'waiting' &&
        (wakes.completed.includes(resource.parent!) ||
          (wakes.freed.includes(urn) && removes(resource.action))),
    )
    .map(({ urn }) => urn);
  wake(model, wakes);
  return {
    sameRoundWakes,
    claimed: due.length,
    calls: moves
      .filter(({ move }) => move === 'sync' || move === 'observe')
      .map(({ call, move }) => ({ ...call, via: move as 'sync' | 'observe' })),
  };
}

/**
 * A worker round whose syncs are still running when requests arrive: it claims every due
 * resource; `finishRound` then ends each sync with ok. A result is written only if the
 * resource is still PENDING with the operation it was claimed for (the write-back is
 * fenced); otherwise it is discarded and the lease released: the row is due at once if it
 * is due at all (decisions.md, "A delete that supersedes an in-flight sync").
 */
export function startRound(model: Model): ExpectedCall[] {
  return dueNow(model).map((urn) => {
    const resource = model.resources.get(urn)!;
    return { ...claim(model, resource, urn), via: callVia(resource) };
  });
}

export function finishRound(model: Model, calls: readonly ExpectedCall[]): void {
  const wakes: Wakes = { completed: [], freed: [] };
  for (const { urn, operationId } of calls) {
    const resource = model.resources.get(urn)!;
    if (resource.status === 'PENDING' && resource.operation.id === operationId)
      endsOk(model, urn, resource, wakes);
    else released(model, resource);
  }
  wake(model, wakes);
}

/** A held call let go: a sync ends with ok, an observe finds the object as the spec says. */
function endsOk(model: Model, urn: string, resource: ModelResource, wakes: Wakes): void {
  if (callVia(resource) === 'observe') observed(model, urn, resource, 'exists', wakes);
  else written(model, urn, resource, { type: 'ok' }, wakes);
}

const callVia = (resource: ModelResource): 'sync' | 'observe' =>
  observing(resource.action) ? 'observe' : 'sync';

/** A sync call's outcome, written back. */
function written(
  model: Model,
  urn: string,
  resource: ModelResource,
  outcome: Outcome,
  wakes: Wakes,
): void {
  Object.assign(resource, { leaseUntilMs: null, waiting: false });
  resource.operation.attempts += 1;
  if (outcome.type === 'ok' || outcome.type === 'requeue') {
    // A step that went well: failures in a row start again from 0.
    Object.assign(resource, { failures: 0, lastError: null });
    if (outcome.type === 'requeue')
      resource.dueAtMs = model.nowMs + outcome.ms; // a wait, not a failure
    else if ((resource.remaining = (resource.remaining ?? 1) - 1) > 0)
      resource.dueAtMs = model.nowMs; // PENDING: call sync again
    else succeed(model, urn, resource, wakes);
    return;
  }
  failed(model, resource, outcome.message, outcome.type === 'terminal');
}

/** A failed call: retried at once (this test runs without backoff), or ERROR when terminal or out of attempts. */
function failed(model: Model, resource: ModelResource, message: string, terminal: boolean): void {
  resource.failures += 1;
  if (terminal || resource.failures >= model.maxAttempts) {
    finish(resource.operation, 'failed', message);
    Object.assign(resource, { status: 'ERROR', lastError: message, dueAtMs: null });
  } else {
    Object.assign(resource, { lastError: message, dueAtMs: model.nowMs });
  }
}

/**
 * An observe call's outcome (§11), written back: an import that finds nothing fails at once;
 * otherwise COMPLETED with what was read (the output when the object exists) and the drift,
 * which the fake's observe only ever finds in the object's existence. A failed read of a
 * refresh records its error in the drift (the last good `exists` stays); an import has none.
 */
function observed(
  model: Model,
  urn: string,
  resource: ModelResource,
  outcome: ObserveOutcome,
  wakes: Wakes,
): void {
  Object.assign(resource, { leaseUntilMs: null, waiting: false });
  resource.operation.attempts += 1;
  const importing = resource.action === 'import';
  if (outcome === 'throw') {
    failed(model, resource, OBSERVE_FAILURE, false);
    if (!importing)
      resource.drift = { exists: resource.drift?.exists ?? true, error: resource.lastError };
    return;
  }
  if (importing && outcome === 'missing') return failed(model, resource, 'nothing to import', true);
  finish(resource.operation, 'succeeded', null);
  if (outcome === 'exists') resource.output = resource.configs.value ?? null;
  Object.assign(resource, {
    status: 'COMPLETED',
    observedVersion: resource.version,
    failures: 0,
    lastError: null,
    dueAtMs: null,
    drift: { exists: outcome === 'exists', error: null },
  });
  wakes.completed.push(urn);
}

/** Waiting (on the parent, or a removal on its dependents): no attempt counted, due again after the poll unless woken. */
function waited(model: Model, resource: ModelResource): void {
  Object.assign(resource, {
    leaseUntilMs: null,
    waiting: true,
    dueAtMs: model.nowMs + model.dependencyPollMs,
  });
}

/** The row is gone (a completed delete, or an orphan, which never calls the module): what it depended on is freed. */
function removed(model: Model, urn: string, resource: ModelResource, wakes: Wakes): void {
  finish(resource.operation, 'succeeded', null);
  model.resources.delete(urn);
  dropSchedulesOf(model, urn);
  if (resource.parent !== null) wakes.freed.push(resource.parent);
}

/** After a batch of write-backs: who waited on a completed parent, or a removal on a freed dependent, is due now. */
function wake(model: Model, { completed, freed }: Wakes): void {
  for (const [urn, r] of model.resources) {
    if (!r.waiting || (r.leaseUntilMs ?? 0) > model.nowMs) continue;
    const parentDone = r.parent !== null && completed.includes(r.parent);
    const freedRemoval = freed.includes(urn) && r.status === 'PENDING' && removes(r.action);
    if (parentDone || freedRemoval) r.dueAtMs = model.nowMs;
  }
}

/**
 * A round cut short: the due resources are claimed and their syncs started, and then the
 * worker shuts down (`stopped`: the syncs are aborted and the leases released, so the rows
 * are due at once), dies (`killed`: its leases stay until they expire), or freezes (`frozen`:
 * like killed, but it may come back, see `thaw`). No result is written: the operations are
 * running, with no attempt counted.
 */
export function interruptedStep(
  model: Model,
  how: 'killed' | 'stopped' | 'frozen',
): ExpectedCall[] {
  const calls = dueNow(model).map((urn) => {
    const resource = model.resources.get(urn)!;
    const call = { ...claim(model, resource, urn), via: callVia(resource) };
    resource.leaseUntilMs = how === 'stopped' ? null : model.nowMs + model.leaseMs;
    resource.dueAtMs = resource.leaseUntilMs ?? model.nowMs;
    return call;
  });
  if (how === 'frozen')
    model.frozen = calls.map(({ urn, operationId }) => ({
      urn,
      operationId,
      claim: model.resources.get(urn)!.claim,
    }));
  return calls;
}

/**
 * The frozen worker carries on, its syncs end with ok. Each write-back is fenced by the
 * claim it holds (docs/design.md §6): if another worker claimed the resource since, nothing is
 * written, not even the lease; otherwise the result is written if the resource is still
 * PENDING with the same operation, or discarded and the lease given back.
 */
export function thaw(model: Model): void {
  const wakes: Wakes = { completed: [], freed: [] };
  for (const { urn, operationId, claim } of model.frozen ?? []) {
    const resource = model.resources.get(urn);
    if (!resource || resource.claim !== claim) continue;
    if (resource.status === 'PENDING' && resource.operation.id === operationId)
      endsOk(model, urn, resource, wakes);
    else released(model, resource);
  }
  wake(model, wakes);
  model.frozen = null;
}

/** A lease given back without a result: a row still due is due at once. */
function released(model: Model, resource: ModelResource): void {
  resource.leaseUntilMs = null;
  if (resource.dueAtMs !== null) resource.dueAtMs = model.nowMs;
}

function claim(model: Model, resource: ModelResource, urn: string): Omit<ExpectedCall, 'via'> {
  resource.claim = model.claims += 1;
  if (resource.operation.status === 'queued') resource.operation.status = 'running';
  return {
    urn,
    action: resource.action,
    version: resource.version,
    operationId: resource.operation.id,
  };
}

/**
 * The sync completed: a delete removes the resource; anything else is COMPLETED at its version,
 * with the value the fake publishes, and a drift it had (a missing object, a failed read) is cleared.
 */
function succeed(model: Model, urn: string, resource: ModelResource, wakes: Wakes): void {
  if (resource.action === 'delete') return removed(model, urn, resource, wakes);
  finish(resource.operation, 'succeeded', null);
  Object.assign(resource, {
    status: 'COMPLETED',
    observedVersion: resource.version,
    dueAtMs: null,
    output: resource.configs.value ?? null,
  });
  if (resource.drift && (!resource.drift.exists || resource.drift.error !== null))
    resource.drift = { exists: true, error: null };
  wakes.completed.push(urn);
}
