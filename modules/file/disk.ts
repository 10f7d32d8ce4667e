import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, lstat, mkdir, open } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';

import { TerminalError } from '../../src/sdk/index.js';
import { projectDirectory } from './paths.js';

/** The configured permission bits. */
export function modeOf(configs: { mode?: string }): number {
  return parseInt(configs.mode ?? '0644', 8);
}

/**
 * A new temporary file in `dir` with a random name, opened for writing with O_EXCL
 * and O_NOFOLLOW (a link or a file placed at the name is refused, never followed or
 * reused), mode 0600 until the caller sets its own. Answers its path and handle.
 */
export async function openTemporary(
  dir: string,
  prefix: string,
): Promise<{ temporary: string; handle: FileHandle }> {
  const temporary = join(dir, `${prefix}${randomBytes(8).toString('hex')}`);
  const handle = await open(
    temporary,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  return { temporary, handle };
}

/** Hex SHA-256 of the content as the module writes it (UTF-8), or of bytes read back. */
export function contentChecksum(content: string | Buffer): string {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Runs `work` in the project's own directory under the root (both made 0700 when
 * missing), with every absolute path in a failure's message made relative to that
 * directory: a user sees the paths they configured, not the server's layout.
 * With `ifMissing` (a read that must change nothing) the directory is not made:
 * when it is missing, `ifMissing` answers.
 */
export async function inProjectDirectory<T>(
  root: string,
  project: string,
  work: (dir: string) => Promise<T>,
  { ifMissing }: { ifMissing?: () => T } = {},
): Promise<T> {
  const absoluteRoot = resolve(root);
  const dir = projectDirectory(absoluteRoot, project);
  try {
    if (!ifMissing) await mkdir(dir, { recursive: true, mode: 0o700 });
    // Steward makes it a directory; anything else there (a link to another project, a file) was put by someone else.
    const info = await lstat(dir).catch((err: NodeJS.ErrnoException) => {
      if (ifMissing && err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (!info) return ifMissing!();
    if (info.isSymbolicLink() || !info.isDirectory()) {
      throw new TerminalError(
        `the project's directory in the file root is not a directory Steward made (it is a ${info.isSymbolicLink() ? 'symbolic link' : 'file'}); an operator must remove it`,
      );
    }
    return await work(dir);
  } catch (err) {
    throw relativePaths(err, absoluteRoot, dir);
  }
}

function relativePaths(err: unknown, root: string, dir: string): unknown {
  const message = (err as { message?: unknown } | null)?.message;
  if (typeof message !== 'string') return err;
  const relative = message
    .split(`${dir}${sep}`)
    .join('')
    .split(dir)
    .join('.')
    .split(root)
    .join('STEWARD_FILE_ROOT');
  if (err instanceof TerminalError) {
    err.message = relative;
    return err;
  }
  // An fs error also carries the absolute paths in fields (path, dest): only its code goes on, with the message.
  const code = (err as { code?: unknown }).code;
  return Object.assign(new Error(relative), typeof code === 'string' ? { code } : {});
}
