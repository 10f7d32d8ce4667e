import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, rename, rm, rmdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { TerminalError } from '../../src/sdk/index.js';
import { openTemporary } from './disk.js';

/**
 * The directory of receipts in the root. A project's directory is named for the
 * project, which starts with [a-z0-9] (docs/design.md §3), so no project, and no
 * configured path (always inside a project's directory), can name this one.
 */
export const RECEIPTS_DIRECTORY = '.steward-receipts';
/** Inodes kept per receipt: one per write that crashed before its link, and the one linked. */
const MAX_INODES = 8;

/** One incarnation of a resource: its URN alone would also name a later resource of the same name. */
export interface Writer {
  urn: string;
  createdAt: string;
}

/** `dev:ino` of a file, as decimal strings (an inode number may pass 2^53). */
export type Inode = string;

interface Receipt {
  urn: string;
  created_at: string;
  path: string;
  inodes: Inode[];
}

/**
 * What the module wrote at a path for a resource, kept on disk so that a write whose
 * write-back was lost (a crash between the link and `state.data.written` being
 * stored) can still be told apart from a file that was there before: the receipt
 * names the exact inodes this resource linked at the path. It is written (and
 * flushed) before the link, so no crash leaves a linked file without one.
 */
export interface WriteReceipts {
  /** Notes that the file with this inode is about to be linked at `path`. */
  record(path: string, inode: Inode): Promise<void>;
  /** Takes back an inode whose link failed (it may be reused by a file that is not ours). */
  unrecord(path: string, inode: Inode): Promise<void>;
  /** True when the file at `target` (configured as `path`) is one this resource linked there. */
  linkedHere(path: string, target: string): Promise<boolean>;
  /** Drops the receipt once the resource's file is removed. */
  forget(): Promise<void>;
}

export function writeReceipts(root: string, writer: Writer): WriteReceipts {
  const dir = join(resolve(root), RECEIPTS_DIRECTORY);
  const file = join(dir, `${createHash('sha256').update(writer.urn).digest('hex')}.json`);
  const mine = async (path: string): Promise<Inode[]> => {
    const receipt = await readReceipt(file);
    return receipt?.urn === writer.urn &&
      receipt.created_at === writer.createdAt &&
      receipt.path === path
      ? receipt.inodes
      : [];
  };
  const save = async (path: string, inodes: Inode[]): Promise<void> => {
    const receipt: Receipt = {
      urn: writer.urn,
      created_at: writer.createdAt,
      path,
      inodes: inodes.slice(-MAX_INODES),
    };
    // Once more if another resource's `forget` removed the emptied directory in between.
    for (let attempt = 1; ; attempt++) {
      await privateDirectory(dir);
      try {
        return await writeDurably(dir, file, JSON.stringify(receipt));
      } catch (err) {
        if (attempt === 2 || (err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
  };
  return {
    record: async (path, inode) => save(path, [...(await mine(path)), inode]),
    unrecord: async (path, inode) => {
      const inodes = await mine(path);
      if (inodes.includes(inode))
        await save(
          path,
          inodes.filter((i) => i !== inode),
        );
    },
    linkedHere: async (path, target) => {
      const info = await lstat(target, { bigint: true }).catch(() => undefined);
      return info !== undefined && (await mine(path)).includes(`${info.dev}:${info.ino}`);
    },
    forget: async () => {
      await rm(file, { force: true });
      await rmdir(dir).catch(() => undefined); // the last one leaves the root as it found it; ENOTEMPTY otherwise
    },
  };
}

/** The inode of an open file. */
export async function inodeOf(handle: {
  stat(o: { bigint: true }): Promise<{ dev: bigint; ino: bigint }>;
}): Promise<Inode> {
  const info = await handle.stat({ bigint: true });
  return `${info.dev}:${info.ino}`;
}

async function readReceipt(file: string): Promise<Receipt | undefined> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW).catch(
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    },
  );
  if (!handle) return undefined;
  try {
    const parsed = JSON.parse(await handle.readFile('utf8')) as Partial<Receipt>;
    const valid =
      typeof parsed.urn === 'string' &&
      typeof parsed.created_at === 'string' &&
      typeof parsed.path === 'string' &&
      Array.isArray(parsed.inodes) &&
      parsed.inodes.every((i) => typeof i === 'string');
    return valid ? (parsed as Receipt) : undefined; // a torn or foreign file proves nothing
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

async function privateDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const info = await lstat(dir);
  if (info.isSymbolicLink() || !info.isDirectory())
    throw new TerminalError(
      `${RECEIPTS_DIRECTORY} in the file root is not a directory Steward made; an operator must remove it`,
    );
}

/** Written aside, flushed, renamed: a crash leaves the old receipt or the new one, never half of one. */
async function writeDurably(dir: string, file: string, text: string): Promise<void> {
  let temporary: string | undefined;
  try {
    const opened = await openTemporary(dir, '.tmp-');
    temporary = opened.temporary;
    try {
      await opened.handle.writeFile(text, 'utf8');
      await opened.handle.datasync();
    } finally {
      await opened.handle.close();
    }
    await rename(temporary, file);
  } finally {
    if (temporary !== undefined) await rm(temporary, { force: true });
  }
}
