import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

import { measureScheduleBurst, type WindowWatcher } from './schedule-burst.js';
import { measureScheduleIdle } from './schedule-idle.js';

/**
 * A CPU profile of the schedules phase's measured window only (the setup left out): the firing of
 * `count` schedules due in the same second (`burst`), or `idle` with `count` future schedules.
 * Writes the .cpuprofile (open it in Chrome DevTools) and prints the functions with the most
 * self time. Run: `npm run -s build && node dist/bench/schedule-profile.js burst 10000`.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

function profiler(file: string): WindowWatcher {
  const session = new Session();
  return {
    async start() {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 500 });
      await session.post('Profiler.start');
    },
    async stop() {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      writeFileSync(file, JSON.stringify(profile));
      printTop(profile.nodes as ProfileNode[]);
    },
  };
}

/** Self time by function (samples whose top frame it is), the 25 largest, as shares of the busy samples. */
function printTop(nodes: readonly ProfileNode[]): void {
  const idle = (node: ProfileNode) => node.callFrame.functionName === '(idle)';
  const hits = (list: readonly ProfileNode[]) =>
    list.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
  const busy = nodes.filter((node) => !idle(node));
  const total = hits(busy);
  console.log(`idle: ${((hits(nodes.filter(idle)) / hits(nodes)) * 100).toFixed(1)} % of samples`);
  const byFunction = new Map<string, number>();
  for (const node of busy) {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url
      ? `${url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${lineNumber + 1}`
      : '';
    const key = `${functionName || '(anonymous)'} ${where}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + (node.hitCount ?? 0));
  }
  const top = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 25);
  for (const [name, n] of top)
    console.log(`${((n / total) * 100).toFixed(1).padStart(5)} %  ${name}`);
}

const [what = 'burst', count] = process.argv.slice(2);
const file = `schedules-${what}.cpuprofile`;
if (what === 'burst') {
  console.log(JSON.stringify(await measureScheduleBurst(Number(count ?? 10_000), profiler(file))));
} else if (what === 'idle') {
  console.log(
    JSON.stringify(
      await measureScheduleIdle(Number(count ?? 100_000), 1000, 20_000, profiler(file)),
    ),
  );
} else {
  throw new Error('usage: schedule-profile.js burst|idle [count]');
}
console.log(`written ${file}`);
