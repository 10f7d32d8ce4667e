import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';

import { benchName, noopCreateBody } from './noop-module.js';

/**
 * The HTTP client side of the benchmark, run in a worker thread so that sending
 * requests and timing them does not compete with Steward for its event loop.
 */
export type LoadPlan =
  /** Open loop: creates and GETs at fixed rates, each request timed on its own. */
  | {
      mode: 'paced';
      api: string;
      project: string;
      createsPerS: number;
      getsPerS: number;
      durationMs: number;
      getUrns: string[];
    }
  /** Closed loop: `total` creates, `concurrency` in flight at once, as fast as Steward accepts them. */
  | { mode: 'burst'; api: string; project: string; total: number; concurrency: number };

export interface LoadResult {
  operationIds: string[];
  postMs: number[];
  getMs: number[];
  failures: string[];
  startedAtMs: number;
  lastAcceptedAtMs: number;
}

const result: LoadResult = {
  operationIds: [],
  postMs: [],
  getMs: [],
  failures: [],
  startedAtMs: Date.now(),
  lastAcceptedAtMs: 0,
};

// node:http with a bounded keep-alive pool: lighter than fetch, and a stall does not open a connection per waiting request.
// Idle sockets are closed after 2 s, before the server's 5 s keep-alive timeout, so a request never races the server's close (ECONNRESET).
const agent = new Agent({ keepAlive: true, maxSockets: 32, timeout: 2000 });

function send(
  method: string,
  url: string,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        agent,
        headers:
          body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function postCreate(api: string, project: string, i: number): Promise<void> {
  const started = performance.now();
  const res = await send(
    'POST',
    `${api}/resources`,
    JSON.stringify(noopCreateBody(project, benchName(i))),
  );
  result.postMs.push(performance.now() - started);
  const body = JSON.parse(res.text) as { operation?: { id: string } };
  if (res.status !== 202 || !body.operation) {
    result.failures.push(`POST ${i}: ${res.status} ${res.text.slice(0, 200)}`);
    return;
  }
  result.operationIds.push(body.operation.id);
  result.lastAcceptedAtMs = Date.now();
}

async function getResource(api: string, urn: string): Promise<void> {
  const started = performance.now();
  const res = await send('GET', `${api}/resources/${urn}`);
  result.getMs.push(performance.now() - started);
  if (res.status !== 200) result.failures.push(`GET ${urn}: ${res.status}`);
}

/** Fires `fire(i)` at `ratePerS` for `durationMs` without waiting for earlier calls (no coordinated omission). */
async function paced(
  ratePerS: number,
  durationMs: number,
  fire: (i: number) => Promise<void>,
): Promise<void> {
  const intervalMs = 1000 / ratePerS;
  const count = Math.floor((durationMs / 1000) * ratePerS);
  const t0 = performance.now();
  const inFlight: Array<Promise<void>> = [];
  for (let i = 0; i < count; i += 1) {
    const wait = t0 + i * intervalMs - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    inFlight.push(fire(i).catch((err: unknown) => void result.failures.push(String(err))));
  }
  await Promise.all(inFlight);
}

async function run(plan: LoadPlan): Promise<LoadResult> {
  result.startedAtMs = Date.now();
  if (plan.mode === 'paced') {
    const urns = plan.getUrns;
    await Promise.all([
      paced(plan.createsPerS, plan.durationMs, (i) => postCreate(plan.api, plan.project, i)),
      paced(plan.getsPerS, plan.durationMs, (i) => getResource(plan.api, urns[i % urns.length]!)),
    ]);
  } else {
    let next = 0;
    const lane = async () => {
      while (next < plan.total) {
        const i = next;
        next += 1;
        await postCreate(plan.api, plan.project, i).catch(
          (err: unknown) => void result.failures.push(String(err)),
        );
      }
    };
    await Promise.all(Array.from({ length: plan.concurrency }, lane));
  }
  agent.destroy();
  return result;
}

if (parentPort) {
  const port = parentPort;
  run(workerData as LoadPlan).then(
    (done) => port.postMessage(done),
    (err: unknown) =>
      port.postMessage({
        ...result,
        failures: [...result.failures, `load client crashed: ${String(err)}`],
      }),
  );
}
