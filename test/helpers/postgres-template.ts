import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
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
  // What decides initdb's bytes: the binaries (their version: a path may not name it), its options,
  // the user it runs as and the time zone it writes into postgresql.conf.
  const [versionFile, versionArgs] = tools.command('initdb', ['--version']);
  const { stdout: version } = await run(versionFile, versionArgs);
  const key = createHash('sha256')
    .update(JSON.stringify([tools.bin, version, initArgs, tools.owner?.uid, process.env.TZ]))
    .digest('hex')
    .slice(0, 16);
  const root = templatesDir();
  const finalDir = join(root, `steward-pg-template-${key}`);
  if (!existsSync(join(finalDir, 'password'))) {
    const building = mkdtempSync(join(root, 'steward-pg-template-building-'));
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
      } catch (err) {
        // another worker's template got there first: use that one
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw err;
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

/**
 * This user's folder of templates in the temporary directory, made by this user: a server started
 * from a template runs its postgresql.conf, so a folder another user could have made first (a
 * predictable name in a shared /tmp) is refused. Others may pass through it (0711), so that
 * initdb, run as the `postgres` user when this is root, reaches its own folder inside.
 */
function templatesDir(): string {
  const uid = process.getuid?.() ?? 0;
  const dir = join(tmpdir(), `steward-pg-templates-${uid}`);
  try {
    mkdirSync(dir, { mode: 0o711 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const stat = lstatSync(dir);
  if (!stat.isDirectory() || stat.uid !== uid || (stat.mode & 0o022) !== 0)
    throw new Error(`${dir} is not a folder of this user's that only it may write: remove it`);
  return dir;
}

/** Copies the template's data directory to `dataDir`, keeping owners and modes (PostgreSQL wants 0700). */
export async function copyTemplate(template: ClusterTemplate, dataDir: string): Promise<void> {
  await run('cp', ['-a', template.dataDir, dataDir]);
}
