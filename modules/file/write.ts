import { constants } from 'node:fs';
import { link, lstat, mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

import { TerminalError } from '../../src/sdk/index.js';
import { modeOf, openTemporary } from './disk.js';
import { inodeOf, type WriteReceipts } from './receipts.js';

type Wanted = { path: string; content?: string; mode?: string };

/**
 * Writes the file through a temporary one, so a crash never leaves half a file or
 * a wider mode: a random name beside the target, opened with O_EXCL (a link or a
 * file placed there is refused, never followed or reused), given its exact mode
 * and content, flushed; then either renamed over the target (`replace`: the file
 * is the resource's own) or hard-linked to it, which fails with EEXIST instead of
 * replacing what is there. The temporary file is gone afterwards, failed or not.
 *
 * Before the link, the temporary file's inode goes into the resource's receipt
 * (receipts.ts). On EEXIST the file there is this resource's own earlier attempt
 * (a crash, a lost write-back) only when the receipt names its inode and it still
 * holds exactly what this write makes; then the write is done. Anything else was
 * not made by this resource and is left untouched: TerminalError "already exists".
 */
export async function writeFile(
  target: string,
  wanted: Wanted,
  { replace, receipts }: { replace: boolean; receipts: WriteReceipts },
): Promise<void> {
  await mkdir(dirname(target), { recursive: true });
  let temporary: string | undefined;
  let inode: string;
  try {
    const opened = await openTemporary(dirname(target), '.steward-tmp-');
    temporary = opened.temporary;
    const handle = opened.handle;
    try {
      await handle.chmod(modeOf(wanted)); // exact, whatever the umask
      await handle.writeFile(wanted.content ?? '', 'utf8');
      await handle.datasync(); // a link that survives a power cut names the content, not an empty file
      inode = await inodeOf(handle);
    } finally {
      await handle.close();
    }
    if (replace) {
      await rename(temporary, target);
      return;
    }
    await receipts.record(wanted.path, inode);
    try {
      await link(temporary, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (await isOwnEarlierWrite(target, wanted, receipts)) return;
      await receipts.unrecord(wanted.path, inode);
      throw alreadyExists(wanted.path);
    }
  } finally {
    if (temporary !== undefined) await rm(temporary, { force: true });
  }
}

/**
 * True when `target` is a file this resource linked there (its receipt names the
 * inode) that still has exactly the content and mode it writes. The content check
 * also guards against an inode number freed and reused by someone else's file.
 */
export async function isOwnEarlierWrite(
  target: string,
  wanted: Wanted,
  receipts: WriteReceipts,
): Promise<boolean> {
  return (
    (await receipts.linkedHere(wanted.path, target)) && (await matchesWhatWeWrite(target, wanted))
  );
}

/** True when `target` is a regular file with exactly the mode and content this resource writes. */
async function matchesWhatWeWrite(target: string, wanted: Wanted): Promise<boolean> {
  const content = Buffer.from(wanted.content ?? '', 'utf8');
  const info = await lstat(target).catch(() => undefined);
  if (!info?.isFile() || (info.mode & 0o7777) !== modeOf(wanted) || info.size !== content.length)
    return false;
  // O_NOFOLLOW: a link swapped in since the lstat is not read through. Unreadable (another owner, 0200): not ours to judge.
  const handle = await open(target, constants.O_RDONLY | constants.O_NOFOLLOW).catch(
    () => undefined,
  );
  if (!handle) return false;
  try {
    return (await handle.readFile()).equals(content);
  } catch {
    return false;
  } finally {
    await handle.close();
  }
}

function alreadyExists(path: string): TerminalError {
  return new TerminalError(
    `file ${path} already exists and this resource did not write it; Steward never replaces a file it did not create: ` +
      'import it with `"import": true` to manage it, or remove or move it, or choose another path, then retry',
  );
}

/** A step that would change a file this resource never wrote (its create failed, or a move did). */
export function notOurs(path: string): TerminalError {
  return new TerminalError(
    `file ${path} was not written by this resource, so it is not changed; update the resource (or retry its create) to write it first`,
  );
}
