import { makeScaleFile } from './scale-sqlite.js';

/**
 * The scale phase's SQLite file alone, kept for looking into (query plans, a list page under
 * autocannon): `node dist/bench/scale-file.js [total]` prints the folder of its steward.db;
 * `steward serve` runs on it with STEWARD_DB=<folder>/steward.db.
 */
const total = Number(process.argv[2] ?? 1_000_000);
if (!Number.isInteger(total) || total < 1000)
  throw new Error('usage: scale-file.js [total ≥ 1000]');
const { dir, cloneS } = await makeScaleFile(total);
console.log(`${total} resources in ${dir}/steward.db (cloned in ${cloneS.toFixed(1)} s)`);
