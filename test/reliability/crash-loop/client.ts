import type { Random } from './random.js';
import { type CrashSupervisor, SupervisorClosed } from './supervisor.js';

export type MutationKind = 'create' | 'update' | 'action' | 'delete';
/** acked: a 2xx; rejected: a 4xx (not applied); unacked: no answer, or a 503 (may or may not have happened). */
export type Outcome = 'acked' | 'rejected' | 'unacked';

export interface LedgerConfigs {
  steps: number;
  max_delay_ms: number;
  tag: string;
}

/** One request that changes a resource, in the order the client sent them (one at a time per resource). */
export interface Mutation {
  kind: MutationKind;
  /** The tag this mutation gives `spec.configs.tag`, unique in the run (not for deletes). */
  tag?: string;
  /** create and update: every config sent. */
  configs?: LedgerConfigs;
  ifMatch?: number;
  outcome: Outcome;
  /** `202`, `409 invalid_state`, or the network error's code. */
  answer: string;
  /** acked: the version and operation the answer named. */
  version?: number;
  operationId?: string;
}

export interface Tracked {
  urn: string;
  name: string;
  mutations: Mutation[];
  /** A request for it is in flight: the client sends one at a time per resource, so the order is known. */
  busy: boolean;
  /** Deleted (or never created and given up): no more requests. */
  retired: boolean;
  /** The version the client last saw, for If-Match; stale on purpose at times. */
  knownVersion?: number;
  /** Seen PENDING: left alone until then, so the client does not spin on GETs. */
  notBeforeMs?: number;
}

export interface CrashClientOptions {
  /** Requests in flight at once. */
  workers: number;
  /** The client keeps about this many resources alive. */
  poolSize: number;
  /** The ledger module's max_delay_ms for each of the (1–3) steps. */
  maxDelayMs: number;
}

type Answer = { status: number; body: any } | { error: string };

const PROJECT = 'crash';
/** Rejections the client provokes on purpose (a stale If-Match, a change while PENDING, a resource deleted meanwhile). */
const EXPECTED_REJECTIONS = new Set([
  '404 not_found',
  '409 invalid_state',
  '409 already_exists',
  '412 precondition_failed',
]);

/**
 * The crash loop's client: `workers` loops send creates, PATCHes (with If-Match or not,
 * nested or flat), `retag` actions (both routes) and deletes to whichever Steward process
 * is alive, and record every mutation with its outcome.
 */
export function createCrashClient(
  supervisor: CrashSupervisor,
  random: Random,
  options: CrashClientOptions,
) {
  const resources = new Map<string, Tracked>();
  const tally: Record<Outcome, number> & { answers: Map<string, number> } = {
    acked: 0,
    rejected: 0,
    unacked: 0,
    answers: new Map(),
  };
  /** What must never happen: a 500, a 400 from a well-formed request, a lost resource; empty at the end. */
  const unexpected: string[] = [];
  let nextName = 0;
  let nextTag = 0;
  let stopping = false;
  let running: Array<Promise<void>> = [];

  const newTag = (kind: MutationKind) => `${kind}-${nextTag++}`;
  const newConfigs = (kind: MutationKind): LedgerConfigs => ({
    steps: random.int(1, 3),
    max_delay_ms: options.maxDelayMs,
    tag: newTag(kind),
  });

  async function send(
    method: string,
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    try {
      const res = await fetch(url, {
        method,
        headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await res.text();
      return { status: res.status, body: parseJson(text) };
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause;
      return { error: cause?.code ?? (err as Error).name };
    }
  }

  async function mutate(
    t: Tracked,
    sent: Omit<Mutation, 'outcome' | 'answer'>,
    method: string,
    path: string,
    body: unknown,
  ): Promise<Mutation> {
    const api = await supervisor.api();
    const headers: Record<string, string> =
      sent.ifMatch === undefined ? {} : { 'if-match': `"${sent.ifMatch}"` };
    const res = await send(method, `${api}${path}`, body, headers);
    const m: Mutation = {
      ...sent,
      outcome: 'unacked',
      answer: 'error' in res ? res.error : String(res.status),
    };
    if ('error' in res) {
      t.knownVersion = undefined;
    } else if (res.status >= 200 && res.status < 300) {
      m.outcome = 'acked';
      m.version = res.body.resource.version as number;
      m.operationId = res.body.operation.id as string;
      t.knownVersion = m.version;
    } else if (res.status >= 500) {
      if (res.status !== 503)
        unexpected.push(`${method} ${t.urn} answered ${res.status}: ${JSON.stringify(res.body)}`);
      t.knownVersion = undefined;
    } else {
      m.outcome = 'rejected';
      m.answer = `${res.status} ${res.body?.error?.code}`;
      if (!EXPECTED_REJECTIONS.has(m.answer))
        unexpected.push(
          `${method} ${t.urn} (${sent.kind}) answered ${res.status}: ${JSON.stringify(res.body)}`,
        );
      t.knownVersion = undefined;
    }
    t.mutations.push(m);
    tally[m.outcome] += 1;
    tally.answers.set(m.answer, (tally.answers.get(m.answer) ?? 0) + 1);
    return m;
  }

  function create(t: Tracked): Promise<Mutation> {
    const configs = newConfigs('create');
    const body = random.chance(0.5)
      ? { kind: 'ledger', project: PROJECT, name: t.name, spec: { configs } }
      : { kind: 'ledger', parent: PROJECT, name: t.name, configs };
    return mutate(t, { kind: 'create', tag: configs.tag, configs }, 'POST', '/resources', body);
  }

  /** Looks first (most of the time): skips a PENDING resource unless deleting, handles one that is gone. */
  async function change(t: Tracked): Promise<void> {
    const roll = random.next();
    const kind: MutationKind = roll < 0.5 ? 'update' : roll < 0.9 ? 'action' : 'delete';
    if (t.knownVersion === undefined || random.chance(0.75)) {
      const api = await supervisor.api();
      const res = await send('GET', `${api}/resources/${t.urn}`);
      if ('error' in res || res.status === 503) return;
      if (res.status === 404) return gone(t);
      if (res.status !== 200) {
        unexpected.push(`GET ${t.urn} answered ${res.status}: ${JSON.stringify(res.body)}`);
        return;
      }
      t.knownVersion = res.body.version as number;
      // A change would be refused (409) while it syncs; a delete is allowed and supersedes the sync, now and then.
      if (res.body.state.status === 'PENDING' && !(kind === 'delete' && random.chance(0.3))) {
        t.notBeforeMs = Date.now() + random.int(20, 100);
        return;
      }
    }
    // Half the requests carry If-Match; one in ten of those names an older version on purpose (a 412, not applied).
    const ifMatch =
      t.knownVersion !== undefined && random.chance(0.5)
        ? t.knownVersion - (random.chance(0.1) ? 1 : 0)
        : undefined;
    const path = `/resources/${t.urn}`;
    if (kind === 'update') {
      const configs = newConfigs('update');
      await mutate(
        t,
        { kind, tag: configs.tag, configs, ifMatch },
        'PATCH',
        path,
        random.chance(0.5) ? { spec: { configs } } : { configs },
      );
    } else if (kind === 'action') {
      const tag = newTag('action');
      if (random.chance(0.5))
        await mutate(t, { kind, tag, ifMatch }, 'POST', `${path}/actions/retag`, { tag });
      else
        await mutate(t, { kind, tag, ifMatch }, 'POST', `${path}/execute`, {
          action: 'retag',
          params: { tag },
        });
    } else {
      const m = await mutate(t, { kind, ifMatch }, 'DELETE', path, undefined);
      if (m.outcome === 'acked') t.retired = true;
    }
  }

  /** A 404: deleted (a delete was sent), never created (its creates went unanswered: create it again), or lost. */
  async function gone(t: Tracked): Promise<void> {
    if (t.mutations.some((m) => m.kind === 'delete' && m.outcome !== 'rejected')) {
      t.retired = true;
    } else if (t.mutations.some((m) => m.kind === 'create' && m.outcome === 'acked')) {
      unexpected.push(
        `${t.urn} answered 404, yet its create was acknowledged and no delete was sent`,
      );
      t.retired = true;
    } else {
      await create(t);
    }
  }

  async function step(): Promise<void> {
    const alive = [...resources.values()].filter((t) => !t.retired);
    const nowMs = Date.now();
    const idle = alive.filter((t) => !t.busy && (t.notBeforeMs ?? 0) <= nowMs);
    let t: Tracked;
    if (alive.length < options.poolSize || random.chance(0.03)) {
      const name = `r${String(nextName++).padStart(5, '0')}`;
      t = {
        urn: `orn:steward:ledger:${PROJECT}:${name}`,
        name,
        mutations: [],
        busy: false,
        retired: false,
      };
      resources.set(t.urn, t);
    } else if (idle.length > 0) {
      t = random.pick(idle);
    } else {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return;
    }
    t.busy = true;
    try {
      if (t.mutations.length === 0) await create(t);
      else await change(t);
    } finally {
      t.busy = false;
    }
  }

  async function loop(): Promise<void> {
    while (!stopping) {
      try {
        await step();
      } catch (err) {
        if (err instanceof SupervisorClosed) return;
        unexpected.push(`client step failed: ${(err as Error).stack ?? String(err)}`);
      }
    }
  }

  return {
    resources,
    tally,
    unexpected,
    start(): void {
      running = Array.from({ length: options.workers }, () => loop());
    },
    /** Lets each loop finish its request in flight. */
    async stop(): Promise<void> {
      stopping = true;
      await Promise.all(running);
    },
  };
}

export type CrashClient = ReturnType<typeof createCrashClient>;

/** The body as JSON, or as text when it is not JSON (a bug the test then reports). */
function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}
