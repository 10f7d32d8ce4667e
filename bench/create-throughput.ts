import { startBenchSteward } from './instance.js';
import { benchName, NOOP_KIND } from './noop-module.js';

/**
 * In-process accept throughput: `total` creates through `steward.commands.create` (no HTTP,
 * worker off) on a temporary SQLite file, spread over `projects` projects. Prints one JSON
 * line per round. Run: `npm run build && node dist/bench/create-throughput.js [total] [rounds]`.
 */
async function measure(total: number, projects: number): Promise<number> {
  const bench = await startBenchSteward({ worker: false });
  try {
    const started = process.hrtime.bigint();
    for (let i = 0; i < total; i += 1) {
      await bench.steward.commands.create({ kind: NOOP_KIND, project: `p${i % projects}`, name: benchName(i) }, { actor: 'bench' });
    }
    return total / (Number(process.hrtime.bigint() - started) / 1e9);
  } finally {
    await bench.close();
  }
}

const total = Number(process.argv[2] ?? 5000);
const rounds = Number(process.argv[3] ?? 3);
const results: number[] = [];
for (let round = 0; round < rounds; round += 1) {
  const perS = await measure(total, 4);
  results.push(perS);
  console.log(JSON.stringify({ round, creates: total, creates_per_s: Math.round(perS) }));
}
const sorted = [...results].sort((a, b) => a - b);
console.log(JSON.stringify({ median_creates_per_s: Math.round(sorted[Math.floor(sorted.length / 2)]!) }));
