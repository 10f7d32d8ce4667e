import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import type { PostgresTools } from '../../bench/postgres-binaries.js';

const run = promisify(execFile);

/** A cluster's data directory as initdb leaves it, and the superuser's password it was made with. */
export interface ClusterTemplate {
  dataDir: string;
  password: string;
}

/**
 * initdb once per machine (per server binaries and initdb options), not once per test file: the
 * PostgreSQL pass starts a cluster in each of its 60-odd files, and initdb cost each about 2 s of
 * a loaded machine's time, where copying its result costs 0.2 s. The copy is the same bytes initdb
 * would write; startPostgres gives each copy its own password once it runs.
 *
 * Made in a directory of its own and renamed into place, so two jest workers that find none at
 * once each make one and the first rename wins; a half-made template is never seen.
 */
export async function clusterTemplate(
  tools: PostgresTools,
  initArgs: string[],
): Promise<ClusterTemplate> {
  const key = createHash('sha256')
    .update(JSON.stringify([tools.bin, initArgs]))
    .digest('hex')
    .slice(0, 16);
  const finalDir = join(tmpdir(), `steward-pg-template-${key}`);
  if (!existsSync(join(finalDir, 'password'))) {
    const building = mkdtempSync(join(tmpdir(), 'steward-pg-template-building-'));
    try {
      const password = randomBytes(18).toString('base64url');
      const pwfile = join(building, 'pwfile');
      writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
      if (tools.owner)
        for (const path of [building, pwfile]) chownSync(path, tools.owner.uid, tools.owner.gid);
      const [file, args] = tools.command('initdb', [
        '-D',
        join(building, 'data'),
        '-U',
        'postgres',
        `--pwfile=${pwfile}`,
        ...initArgs,
      ]);
      await run(file, args, { cwd: building }).catch((err: Error & { stderr?: string }) => {
        throw new Error(`initdb failed: ${err.message}\n${err.stderr ?? ''}`);
      });
      rmSync(pwfile);
      // Written last: its presence is what says the template is whole.
      writeFileSync(join(building, 'password'), password, { mode: 0o600 });
      try {
        renameSync(building, finalDir);
      } catch {
        // another worker's template got there first: use that one
      }
    } finally {
      rmSync(building, { recursive: true, force: true });
    }
  }
  return {
    dataDir: join(finalDir, 'data'),
    password: readFileSync(join(finalDir, 'password'), 'utf8'),
  };
}

/** Copies the template's data directory to `dataDir`, keeping owners and modes (PostgreSQL wants 0700). */
export async function copyTemplate(template: ClusterTemplate, dataDir: string): Promise<void> {
  await run('cp', ['-a', template.dataDir, dataDir]);
}
