import BetterSqlite3 from 'better-sqlite3';

import { API_PREFIX } from '../src/api/prefix.js';
import { type RunningServer, startBareExpress, startStewardServe } from './api-processes.js';
import { cannon, type CannonFigures } from './cannon.js';
import { noopCreateBody, noopUrn, spreadProject } from './noop-module.js';
import { sleep } from './stats.js';

/** autocannon's settings for every run of the phase, as issue 18 measured them. */
const CONNECTIONS = 32;
const DURATION_S = 8;
/** The list phase's page, and the steady create rate the worker must keep up with. */
const PAGE_SIZE = 50;
const STEADY_CREATES_PER_S = 1000;
const PROJECT = 'bench';
/** The project of the `index`th resource made (noop-module.ts spreadProject). */
const projectOf = (index: number) => spreadProject(PROJECT, index);

export interface ConvergeFigures {
  /** The offered rate (autocannon's overallRate) and what it achieved. */
  offeredPerS: number;
  createsPerS: number;
  failures: number;
  /** Resources PENDING, sampled every 250 ms while the load ran: the worker keeps up when it stays flat. */
  maxBacklog: number;
  backlogAtEnd: number;
  /** From the end of the load until nothing was PENDING. */
  drainMs: number;
  /** Every resource the API accepted reached COMPLETED. */
  allCompleted: boolean;
}

/** The bare app's run of the same kind just before a Steward run and just after it. */
export interface Bracket {
  before: CannonFigures;
  after: CannonFigures;
}

export interface StewardApiFigures {
  post: CannonFigures;
  get: CannonFigures;
  list: CannonFigures;
  steady: ConvergeFigures;
  /** The bare app around each run above: POST around `post`, GET around `get` and around `list`. */
  bare: { post: Bracket; get: Bracket; list: Bracket };
}

export interface ApiRatioResult {
  connections: number;
  durationS: number;
  /** The bare app's list of 50, once (shown beside the others; the list's ratio is to a bare GET). */
  bareList: CannonFigures;
  /**
   * The bare app with its requests born with express's prototypes, as Steward's server makes them
   * (src/api/born-with-prototypes.ts), POST and GET at the phase's start (`before`) and end (`after`):
   * the stricter reference, since the saving makes the bare app 3-4 times as fast too (docs/decisions.md).
   */
  born: { post: Bracket; get: Bracket };
  open: StewardApiFigures;
  tokens: StewardApiFigures;
}

/** What a Steward run is compared with: the mean of the bare app's runs around it. */
export function bareRate({ before, after }: Bracket): number {
  return (before.requestsPerS + after.requestsPerS) / 2;
}

/**
 * Issue 18's API phase: autocannon (32 connections, 8 s a run) against `steward serve` with every
 * default (the worker on), without tokens and with them, and against a bare express app in its own
 * process in the same run; the ratios are the figures. Then creates at a steady 1,000/s, to see the
 * worker keep up and every accepted create converge.
 *
 * The bare app runs just before and just after each Steward run it is compared with, and the ratio
 * is to their mean: this machine's speed drifts within minutes, and measured once at the start, the
 * bare app's rate moved every ratio of the phase by as much as the drift (docs/decisions.md).
 */
export async function measureApiRatios(): Promise<ApiRatioResult> {
  const bare = await startBareExpress();
  let bornBare: RunningServer | undefined;
  try {
    bornBare = await startBareExpress(true);
    const runs = bareRuns(bare);
    const bornRuns = bareRuns(bornBare);
    await runs.get(); // the JIT warms on the same code paths it is measured on
    await bornRuns.get();
    const bornBefore = { post: await bornRuns.post(), get: await bornRuns.get() };
    const bareList = await runs.list();
    const open = await measureSteward(false, runs);
    const tokens = await measureSteward(true, runs);
    const born = {
      post: { before: bornBefore.post, after: await bornRuns.post() },
      get: { before: bornBefore.get, after: await bornRuns.get() },
    };
    return { connections: CONNECTIONS, durationS: DURATION_S, bareList, born, open, tokens };
  } finally {
    await bare.stop();
    await bornBare?.stop();
  }
}

type BareRuns = Record<'post' | 'get' | 'list', () => Promise<CannonFigures>>;

function bareRuns(server: RunningServer): BareRuns {
  let n = 0;
  const run = (method: 'GET' | 'POST', path: string, body?: () => string) =>
    cannon({
      url: `${server.url}${path}`,
      method,
      connections: CONNECTIONS,
      duration: DURATION_S,
      ...(body && { next: () => ({ body: body() }) }),
    });
  return {
    post: () => run('POST', '/things', () => JSON.stringify({ name: `t-${n++}` })),
    get: () => run('GET', '/things/t-1'),
    list: () => run('GET', '/things'),
  };
}

/**
 * `measure`, with a run of `bare` before and after it, each once Steward is idle (`idle`: its worker
 * has reconciled what the runs before left PENDING, which it would otherwise do on the cores the
 * bare app is measured on).
 */
async function bracketed(
  bare: () => Promise<CannonFigures>,
  measure: () => Promise<CannonFigures>,
  idle: () => Promise<void>,
  /** The run before, when the last bracket's run after is it (GET, then the list). */
  runBefore?: CannonFigures,
): Promise<{ figures: CannonFigures; bracket: Bracket }> {
  await idle();
  const before = runBefore ?? (await bare());
  const figures = await measure();
  await idle();
  return { figures, bracket: { before, after: await bare() } };
}

async function measureSteward(tokens: boolean, bare: BareRuns): Promise<StewardApiFigures> {
  const server = await startStewardServe({ tokens });
  try {
    const headers = server.authorization ? { authorization: server.authorization } : undefined;
    let n = 0;
    const create = (rate?: number) =>
      cannon({
        url: `${server.url}${API_PREFIX}/resources`,
        method: 'POST',
        headers,
        connections: CONNECTIONS,
        duration: DURATION_S,
        ...(rate !== undefined && { overallRate: rate }),
        next: () => {
          const index = n++;
          return { body: JSON.stringify(noopCreateBody(projectOf(index), `a-${index}`)) };
        },
      });
    // The reads are measured with the worker on but idle: creates at full speed leave thousands PENDING, and GET
    // and list measured while the worker drains them measured the two sharing one core (docs/benchmarks.md § API).
    // The POST starts from none PENDING too, as the bare runs around it are measured.
    const idle = () => drainBacklog(server);
    await create(); // warm-up, and the resources the reads below read
    const post = await bracketed(bare.post, () => create(), idle);
    const made = n;
    let read = 0;
    const get = await bracketed(
      bare.get,
      () =>
        cannon({
          url: server.url,
          headers,
          connections: CONNECTIONS,
          duration: DURATION_S,
          next: () => {
            const index = read++ % made;
            const urn = noopUrn(projectOf(index), `a-${index}`);
            return { path: `${API_PREFIX}/resources/${encodeURIComponent(urn)}` };
          },
        }),
      idle,
    );
    const list = await bracketed(
      bare.get,
      () =>
        cannon({
          url: `${server.url}${API_PREFIX}/resources?project=${PROJECT}&page_size=${PAGE_SIZE}`,
          headers,
          connections: CONNECTIONS,
          duration: DURATION_S,
        }),
      idle,
      get.bracket.after,
    );
    const steady = await measureSteady(server, () => create(STEADY_CREATES_PER_S));
    return {
      post: post.figures,
      get: get.figures,
      list: list.figures,
      steady,
      bare: { post: post.bracket, get: get.bracket, list: list.bracket },
    };
  } finally {
    await server.stop();
  }
}

/** Waits until the worker has reconciled every resource the earlier runs left PENDING. */
export async function drainBacklog(server: RunningServer): Promise<void> {
  const db = new BetterSqlite3(server.db!, { readonly: true, timeout: 5000 });
  try {
    const pending = db.prepare<[], { n: number }>(
      "select count(*) as n from resources where status = 'PENDING'",
    );
    await drain(() => pending.get()!.n);
  } finally {
    db.close();
  }
}

/** Runs `load` while sampling the PENDING count from the database file, then waits for it to drain. */
export async function measureSteady(
  server: RunningServer,
  load: () => Promise<CannonFigures>,
): Promise<ConvergeFigures> {
  const db = new BetterSqlite3(server.db!, { readonly: true, timeout: 5000 });
  try {
    const pending = db.prepare<[], { n: number }>(
      "select count(*) as n from resources where status = 'PENDING'",
    );
    const count = () => pending.get()!.n;
    // Whatever the earlier runs left is reconciled first, so the backlog seen is this load's.
    await drain(count);
    let maxBacklog = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        maxBacklog = Math.max(maxBacklog, count());
        await sleep(250);
      }
    })();
    const figures = await load();
    sampling = false;
    await sampler;
    const backlogAtEnd = count();
    const drainStarted = Date.now();
    await drain(count);
    const drainMs = Date.now() - drainStarted;
    const notCompleted = db
      .prepare<[], { n: number }>("select count(*) as n from resources where status <> 'COMPLETED'")
      .get()!.n;
    return {
      offeredPerS: STEADY_CREATES_PER_S,
      createsPerS: figures.requestsPerS,
      failures: figures.failures,
      maxBacklog,
      backlogAtEnd,
      drainMs,
      allCompleted: notCompleted === 0,
    };
  } finally {
    db.close();
  }
}

async function drain(count: () => number): Promise<void> {
  const deadline = Date.now() + 300_000;
  while (count() > 0) {
    if (Date.now() > deadline) throw new Error('the worker did not drain its backlog in 5 min');
    await sleep(100);
  }
}
