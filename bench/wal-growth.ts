import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/core/logging.js';
import { createSteward } from '../src/steward.js';

/**
 * Issue 11's disk growth: sixty creates of `file` resources with 1,000,000 bytes of content each,
 * through commands.create with the worker running, then the sizes of the SQLite file and its WAL
 * once every resource is COMPLETED and the checkpointer has had `settleMs`.
 * Run: `npm run build && node dist/bench/wal-growth.js [count] [settleMs]`.
 */
const count = Number(process.argv[2] ?? 60);
const settleMs = Number(process.argv[3] ?? 2000);
const dir = mkdtempSync(join(tmpdir(), 'steward-wal-'));
const db = join(dir, 'steward.db');
const config = Object.freeze({ ...loadConfig({}), db, fileRoot: join(dir, 'files'), port: 0 });
const steward = await createSteward(config, { logger: silentLogger });
await steward.start();
const size = (file: string) => {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
};
const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;
try {
  const content = 'x'.repeat(1_000_000);
  for (let i = 0; i < count; i += 1) {
    await steward.commands.create(
      { kind: 'file', project: 'wal', name: `f${i}`, configs: { path: `f${i}.txt`, content } },
      { actor: 'bench' },
    );
  }
  const accepted = { db_mb: mb(size(db)), wal_mb: mb(size(`${db}-wal`)) };
  for (;;) {
    const page = await steward.queries.listResources({ project: 'wal', status: 'PENDING' }, 1);
    if (page.items.length === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  const settled = { db_mb: mb(size(db)), wal_mb: mb(size(`${db}-wal`)) };
  // The WAL restarts (and is cut to journal_size_limit) only at the first write after a complete checkpoint.
  await steward.commands.create(
    { kind: 'file', project: 'wal', name: 'next', configs: { path: 'next.txt' } },
    { actor: 'bench' },
  );
  console.log(
    JSON.stringify({
      creates: count,
      accepted,
      settled,
      after_next_write: { db_mb: mb(size(db)), wal_mb: mb(size(`${db}-wal`)) },
    }),
  );
} finally {
  await steward.stop();
  rmSync(dir, { recursive: true, force: true });
}
