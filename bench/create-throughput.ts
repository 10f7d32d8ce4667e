import { startBenchSteward } from './instance.js';
import { benchName, NOOP_KIND } from './noop-module.js';

/**
 * In-process accept throughput: `total` creates through `steward.commands.create` (no HTTP,
 * worker off) on a temporary SQLite file, spread over `projects` projects. Prints one JSON
 * line per round. Run: `npm run build && node dist/bench/create-throughput.js [total] [rounds] [off]`.
 */
async function measure(total: number, projects: number): Promise<{ wall: number; cpu: number }> {
  const bench = await startBenchSteward({ worker: false, config: settings(process.argv[4]) });
  try {
    const started = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    for (let i = 0; i < total; i += 1) {
      await bench.steward.commands.create(
        { kind: NOOP_KIND, project: `p${i % projects}`, name: benchName(i) },
        { actor: 'bench' },
      );
    }
    const spent = process.cpuUsage(cpu);
    return {
      wall: total / (Number(process.hrtime.bigint() - started) / 1e9),
      cpu: total / ((spent.user + spent.system) / 1e6),
    };
  } finally {
    await bench.close();
  }
}

/** `off`: every quota and the revision retention at 0, to see what counting costs. */
function settings(mode: string | undefined) {
  if (mode !== 'off') return {};
  return {
    quotaProjectResources: 0,
    quotaResources: 0,
    quotaProjectBytes: 0,
    quotaBytes: 0,
    quotaProjectProcesses: 0,
    quotaProcesses: 0,
    revisionRetention: 0,
  };
}

const total = Number(process.argv[2] ?? 5000);
const rounds = Number(process.argv[3] ?? 3);
const wall: number[] = [];
const cpu: number[] = [];
for (let round = 0; round < rounds; round += 1) {
  const result = await measure(total, 4);
  wall.push(result.wall);
  cpu.push(result.cpu);
  console.log(
    JSON.stringify({
      round,
      creates: total,
      creates_per_s: Math.round(result.wall),
      creates_per_cpu_s: Math.round(result.cpu),
    }),
  );
}
// Per CPU-second is steadier than per second on a shared machine: time spent waiting for the CPU is left out.
const median = (values: number[]) =>
  Math.round([...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!);
console.log(
  JSON.stringify({ median_creates_per_s: median(wall), median_creates_per_cpu_s: median(cpu) }),
);
