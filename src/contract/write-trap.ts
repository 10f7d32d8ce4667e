import { constants } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';

import { createPatcher } from './io-trap.js';
import type { Outcome } from './recording-module.js';

/** Thrown by a trapped write during `observe`; the module sees it as any failing call. */
export class TrappedWriteError extends Error {
  override readonly name = 'TrappedWriteError';
}

const require = createRequire(import.meta.url);

/** The functions of node:fs and node:fs/promises that change the file system whatever their arguments. */
const FS_WRITES = [
  'appendFile',
  'chmod',
  'chown',
  'copyFile',
  'cp',
  'createWriteStream',
  'fchmod',
  'fchown',
  'ftruncate',
  'futimes',
  'lchmod',
  'lchown',
  'link',
  'lutimes',
  'mkdir',
  'mkdtemp',
  'rename',
  'rm',
  'rmdir',
  'symlink',
  'truncate',
  'unlink',
  'utimes',
  'write',
  'writeFile',
  'writev',
];

/** Flags of `open` that can change a file: writing, creating, truncating, appending. */
const WRITE_FLAGS =
  constants.O_WRONLY |
  constants.O_RDWR |
  constants.O_CREAT |
  constants.O_TRUNC |
  constants.O_APPEND;

/**
 * Runs an async call (the module's `observe`) with the file system's writes and
 * signals to processes replaced by throwing versions, and reports every attempt
 * (even one the call caught). Reads, `open` for reading, `process.kill(pid, 0)`
 * (a liveness probe), the network and child processes stay allowed: an observe
 * reads its backend, and only a write can be told from a read without knowing it.
 *
 * The traps are process-wide while the call runs. The kit runs nothing else
 * meanwhile (its engine is stepped, not looping), so what they catch is the
 * call's. Like `withTraps`, named imports of built-ins are not trapped under
 * jest's ESM runtime; default imports and `require` are, and plain node traps all.
 */
export async function withWriteTraps<T>(
  fn: () => Promise<T>,
): Promise<{ outcome: Outcome<T>; attempts: string[] }> {
  const attempts: string[] = [];
  const patcher = createPatcher();
  const trap = (label: string) => (): never => {
    attempts.push(label);
    throw new TrappedWriteError(`observe must not change anything: ${label} was called`);
  };
  try {
    for (const specifier of ['node:fs', 'node:fs/promises']) {
      const moduleObject = require(specifier) as Record<string, unknown>;
      const short = specifier.slice('node:'.length);
      for (const name of FS_WRITES)
        for (const key of [name, `${name}Sync`])
          patcher.patch(moduleObject, key, trap(`${short}.${key}()`));
      for (const key of ['open', 'openSync']) {
        const original = moduleObject[key];
        if (typeof original !== 'function') continue;
        patcher.patch(moduleObject, key, function (this: unknown, ...args: unknown[]): unknown {
          if (writes(args[1])) return trap(`${short}.${key}() for writing`)();
          return (original as (...a: unknown[]) => unknown).apply(this, args);
        });
      }
    }
    const kill = process.kill.bind(process);
    patcher.patch(process, 'kill', (pid: number, signal?: string | number) =>
      signal === 0 ? kill(pid, 0) : trap(`process.kill(${pid}, ${String(signal ?? 'SIGTERM')})`)(),
    );
    syncBuiltinESMExports();
  } catch (err) {
    patcher.restore();
    throw err;
  }
  try {
    return { outcome: { value: await fn() }, attempts };
  } catch (error) {
    return { outcome: { error }, attempts };
  } finally {
    patcher.restore();
  }
}

function writes(flags: unknown): boolean {
  if (typeof flags === 'number') return (flags & WRITE_FLAGS) !== 0;
  return typeof flags === 'string' && /[wa+]/.test(flags);
}
