import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createStore } from '../../src/store/create-store.js';
import { describeOneDialect } from '../helpers/dialects.js';

/** The database holds every spec: what Steward creates for it is its user's alone, whatever the umask. */
describeOneDialect('sqlite', 'SQLite file modes', () => {
  let dir: string;
  let umask: number;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-modes-'));
    // The most permissive umask: a mode that holds here holds under any.
    umask = process.umask(0);
  });
  afterEach(() => {
    process.umask(umask);
    rmSync(dir, { recursive: true, force: true });
  });
  const modeOf = (path: string) => statSync(path).mode & 0o777;

  it('creates the directories 0700 and the database, -wal and -shm 0600', async () => {
    const file = join(dir, 'data', 'nested', 'steward.db');
    const store = await createStore({ db: file, busyTimeoutMs: 1000 });
    try {
      expect([modeOf(join(dir, 'data')), modeOf(join(dir, 'data', 'nested'))]).toEqual([
        0o700, 0o700,
      ]);
      expect([file, `${file}-wal`, `${file}-shm`].map(modeOf)).toEqual([0o600, 0o600, 0o600]);
    } finally {
      await store.close();
    }
  });

  it('leaves the mode of a database file the operator made as it is', async () => {
    const file = join(dir, 'steward.db');
    writeFileSync(file, '');
    chmodSync(file, 0o640);
    const store = await createStore({ db: file, busyTimeoutMs: 1000 });
    await store.close();
    expect(modeOf(file)).toBe(0o640);
  });
});
