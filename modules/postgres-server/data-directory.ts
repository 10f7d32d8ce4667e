import { constants } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, normalize, sep } from 'node:path';

import { TerminalError } from '../../src/sdk/index.js';

/**
 * STEWARD_POSTGRES_DATA_DIRS: the directories under which a postgres_server's `data_directory`
 * may be. Reading a server's postmaster.pid tells whoever may edit the resource what runs there,
 * so nothing is read unless the operator listed a directory (none by default).
 */

const SETTING = 'STEWARD_POSTGRES_DATA_DIRS';

/** What a running server's postmaster.pid says (PostgreSQL 10 and later write these lines). */
export interface Postmaster {
  pid: number;
  port: number;
  /** Line 5: the first of unix_socket_directories, or undefined when the server has none. */
  socketDirectory?: string;
  /** Line 6: the first of listen_addresses (`*` for all), or undefined when TCP is off. */
  listenAddress?: string;
}

export interface DataDirectoryPolicy {
  /** Why `path` is refused without touching the file system (plan time), or undefined. */
  refusal(path: string): string | undefined;
  /**
   * The server running in `path`: null when no postmaster.pid is there or its pid is not alive.
   * Refusals (outside the list, a symlink leading out of it) are TerminalErrors.
   */
  readPostmaster(path: string): Promise<Postmaster | null>;
}

/** The problem with one entry of the list, or undefined when it is an absolute, normal directory path. */
export function dataDirEntryProblem(entry: string): string | undefined {
  return isNormalAbsolute(entry) ? undefined : 'is not an absolute path without . or .. parts';
}

const isNormalAbsolute = (path: string) =>
  isAbsolute(path) && !path.includes('\0') && normalize(path) === path.replace(/(.)\/+$/, '$1');

const trimmed = (path: string) => (path.length > 1 ? path.replace(/\/+$/, '') : path);
const inside = (path: string, dir: string) =>
  path === dir || path.startsWith(dir === sep ? dir : `${dir}${sep}`);

/** Builds the policy of a list (entries are checked by the configuration already; a bad one throws). */
export function createDataDirectoryPolicy(entries: readonly string[] = []): DataDirectoryPolicy {
  for (const entry of entries) {
    const problem = dataDirEntryProblem(entry);
    if (problem) throw new Error(`${SETTING}: "${entry}" ${problem}`);
  }
  const allowed = entries.map(trimmed);
  const notAllowed = (path: string) =>
    `data_directory "${path}" is not inside an allowed directory (${SETTING}${allowed.length ? '' : ' is empty'})`;

  function refusal(path: string): string | undefined {
    if (!isNormalAbsolute(path))
      return `data_directory "${path}" must be an absolute path without . or .. parts`;
    return allowed.some((dir) => inside(trimmed(path), dir)) ? undefined : notAllowed(path);
  }

  return {
    refusal,
    async readPostmaster(path) {
      const refused = refusal(path);
      if (refused) throw new TerminalError(refused);
      // Compared once every symlink is resolved, so a link inside the list cannot lead out of it.
      const real = await realpath(path).catch(missingAsNull);
      if (real === null) return null;
      const roots = await Promise.all(allowed.map((dir) => realpath(dir).catch(() => null)));
      if (!roots.some((root) => root !== null && inside(real, root)))
        throw new TerminalError(`${notAllowed(path)}: it leads outside through a symbolic link`);
      const text = await readNoFollow(join(real, 'postmaster.pid'));
      if (text === null) return null;
      const postmaster = parsePostmaster(text, path);
      return (await isAlive(postmaster.pid)) ? postmaster : null;
    },
  };
}

/** Opened with O_NOFOLLOW: a postmaster.pid that is a symlink is refused, never read through. */
async function readNoFollow(file: string): Promise<string | null> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw new TerminalError(`${file} is a symbolic link; it is not read`);
    throw new TerminalError(`cannot read ${file}: ${code ?? (err as Error).message}`);
  }
  try {
    // A few hundred bytes; the cap keeps a strange file from being read whole.
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(4096), 0, 4096, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** Lines 1, 4, 5 and 6 of postmaster.pid (pid, port, socket directory, listen address). */
export function parsePostmaster(text: string, path: string): Postmaster {
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new TerminalError(
      `${path}/postmaster.pid is not a running server's (no pid on line 1 or port on line 4)`,
    );
  const socketDirectory = lines[4]?.trim() || undefined;
  const listenAddress = lines[5]?.trim() || undefined;
  return {
    pid,
    port,
    ...(socketDirectory ? { socketDirectory } : {}),
    ...(listenAddress ? { listenAddress } : {}),
  };
}

/** A pid left in postmaster.pid by a server that crashed is not alive: /proc has no entry for it. */
async function isAlive(pid: number): Promise<boolean> {
  return stat(`/proc/${pid}`).then(
    () => true,
    () => false,
  );
}

function missingAsNull(err: unknown): null {
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
  throw new TerminalError(
    `cannot resolve data_directory: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
  );
}

/** Where the server postmaster.pid describes listens: its listen address (loopback for a wildcard), then its socket directory. */
export function hostsOf(postmaster: Postmaster): string[] {
  const listen = postmaster.listenAddress;
  const tcp =
    listen === undefined
      ? []
      : listen === '*' || listen === '0.0.0.0'
        ? ['127.0.0.1']
        : listen === '::'
          ? ['::1']
          : [listen];
  return [...tcp, ...(postmaster.socketDirectory ? [postmaster.socketDirectory] : [])];
}
