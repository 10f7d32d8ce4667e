import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { API_PREFIX } from '../src/api/prefix.js';
import { startStewardServe } from './api-processes.js';
import { drainBacklog } from './api-ratio.js';
import { cannon } from './cannon.js';
import { noopCreateBody, spreadProject } from './noop-module.js';
import { cpuMsOf, threadCpuMsOf, treeCpuMsOf } from './process-cpu.js';

/**
 * One request kind of the API phase against `steward serve`, for looking into issue 18's figures:
 * autocannon (32 connections, 8 s) sends `post` (a new resource each), `get` (one resource) or
 * `list` (a page of 50; both once the worker has reconciled the creates made to read, as the api
 * phase reads) and prints requests/s; with `--profile` the Steward process runs under
 * `--cpu-prof` and the .cpuprofile's path is printed (open it in Chrome DevTools); `--no-worker`
 * sets STEWARD_WORKER=false; `--tokens` configures an admin token and sends it. For one step of an
 * ablation, BENCH_ENV adds settings to the Steward process (`BENCH_ENV='STEWARD_LOG_LEVEL=warn'`)
 * and BENCH_NODE_ARGS node flags (`BENCH_NODE_ARGS=--max-semi-space-size=64`), each space-separated.
 * Also printed (Linux): the Steward process's CPU milliseconds per request of the measured run,
 * which a loaded machine disturbs far less than requests/s, and its worker process's (when `serve`
 * started one, src/worker-process/); with `--threads`, the first split by
 * thread (`tid:ms`, largest first: the event loop, GC helpers, worker threads).
 * Run: `npm run -s build && node dist/bench/api-profile.js post --profile`.
 */
const [what = 'post', ...flags] = process.argv.slice(2);
if (!['post', 'get', 'list'].includes(what))
  throw new Error(
    'usage: api-profile.js post|get|list [--profile] [--no-worker] [--threads] [--tokens]',
  );
const profile = flags.includes('--profile');
const dir = mkdtempSync(join(tmpdir(), 'steward-api-profile-'));
const server = await startStewardServe({
  tokens: flags.includes('--tokens'),
  dir,
  nodeArgs: [
    ...(profile
      ? ['--cpu-prof', `--cpu-prof-dir=${join(dir, 'prof')}`, '--cpu-prof-interval=500']
      : []),
    ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
  ],
  env: {
    ...(flags.includes('--no-worker') ? { STEWARD_WORKER: 'false' } : {}),
    ...Object.fromEntries(
      (process.env.BENCH_ENV ?? '')
        .split(' ')
        .filter(Boolean)
        .map((kv) => kv.split('=')),
    ),
  },
});
let stopped = false;
try {
  const api = `${server.url}${API_PREFIX}`;
  const headers = server.authorization ? { authorization: server.authorization } : undefined;
  let n = 0;
  const post = () =>
    cannon({
      url: `${api}/resources`,
      method: 'POST',
      connections: 32,
      duration: 8,
      headers,
      // Spread over projects: past a project's quota (10,000 by default) every create is a cheaper 403.
      next: () => {
        const index = n++;
        return {
          body: JSON.stringify(noopCreateBody(spreadProject('bench', index), `r-${index}`)),
        };
      },
    });
  let figures;
  let cpuBefore = cpuMsOf(server.pid);
  let treeBefore = treeCpuMsOf(server.pid);
  let threadsBefore = threadCpuMsOf(server.pid);
  if (what === 'post') figures = await post();
  else {
    await post(); // something to read
    await drainBacklog(server); // as the api phase reads: with the worker idle
    const page = (await (
      await fetch(`${api}/resources?project=bench&page_size=1`, { headers })
    ).json()) as {
      resources: Array<{ urn: string }>;
    };
    const url =
      what === 'get'
        ? `${api}/resources/${page.resources[0]!.urn}`
        : `${api}/resources?project=bench&page_size=50`;
    cpuBefore = cpuMsOf(server.pid);
    treeBefore = treeCpuMsOf(server.pid);
    threadsBefore = threadCpuMsOf(server.pid);
    figures = await cannon({ url, connections: 32, duration: 8, headers });
  }
  const cpuMs = cpuMsOf(server.pid) - cpuBefore;
  const otherMs = treeCpuMsOf(server.pid) - treeBefore - cpuMs;
  const per = (ms: number) => (ms / figures.total).toFixed(3);
  const perRequest =
    figures.total > 0
      ? ` cpu ${per(cpuMs)} ms/request` +
        (otherMs > 0 ? ` (+ ${per(otherMs)} in its worker process)` : '')
      : '';
  const threads = flags.includes('--threads')
    ? ` threads ${[...threadCpuMsOf(server.pid)]
        .map(([tid, ms]) => [tid, ms - (threadsBefore.get(tid) ?? 0)] as const)
        .filter(([, ms]) => ms > 0)
        .sort((a, b) => b[1] - a[1])
        .map(([tid, ms]) => `${tid}:${(ms / Math.max(1, figures.total)).toFixed(2)}`)
        .join(' ')}`
    : '';
  console.log(
    `${what}: ${figures.requestsPerS.toFixed(0)}/s${perRequest}${threads}`,
    JSON.stringify(figures),
  );
  // The profile is written when the process exits: stop it first, keeping its folder.
  await server.stop(true);
  stopped = true;
  if (profile) console.log(`profile: ${join(dir, 'prof', readdirSync(join(dir, 'prof'))[0]!)}`);
} finally {
  if (!stopped) await server.stop();
}
