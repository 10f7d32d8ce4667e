import { API_PREFIX } from '../src/api/prefix.js';
import { startStewardServe } from './api-processes.js';
import { cannon } from './cannon.js';
import { noopUrn } from './noop-module.js';
import { treeCpuMsOf } from './process-cpu.js';

/**
 * The scale phase's GET or list latency alone, on a folder that `node dist/bench/scale-file.js`
 * made (kept as it is): `steward serve` (every default, worker on) started on it, 2 s of
 * autocannon to warm up, then `seconds` measured at `connections`; prints requests/s, p50, p99
 * and the process's CPU milliseconds per request (from /proc, which a loaded machine disturbs
 * far less than the rest). For alternating builds: run it from each build's dist/.
 *
 *   node dist/bench/scale-latency.js <folder> [list|get] [connections=8] [seconds=8]
 */
const [dir, what = 'list', connections = '8', seconds = '8'] = process.argv.slice(2);
if (!dir || !['list', 'get'].includes(what))
  throw new Error('usage: scale-latency.js <folder> [list|get] [connections] [seconds]');
const server = await startStewardServe({ tokens: false, dir });
try {
  const url =
    what === 'list'
      ? `${server.url}${API_PREFIX}/resources?project=bench&page_size=50`
      : `${server.url}${API_PREFIX}/resources/${encodeURIComponent(noopUrn('bench', 's-17-42'))}`;
  const check = await fetch(url);
  if (!check.ok) throw new Error(`${what} answered ${check.status}: ${await check.text()}`);
  await cannon({ url, connections: Number(connections), duration: 2 });
  const before = treeCpuMsOf(server.pid);
  const figures = await cannon({
    url,
    connections: Number(connections),
    duration: Number(seconds),
  });
  const perRequest = (treeCpuMsOf(server.pid) - before) / Math.max(figures.total, 1);
  console.log(
    `${what}: ${figures.requestsPerS.toFixed(0)}/s p50 ${figures.p50Ms} ms p99 ${figures.p99Ms} ms` +
      ` cpu ${perRequest.toFixed(3)} ms/request failures ${figures.failures}`,
  );
} finally {
  await server.stop(true);
}
