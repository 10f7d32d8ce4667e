import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';

import { type ObserveResult, type SyncInput, TerminalError } from '../../src/sdk/index.js';
import { contentChecksum, inProjectDirectory } from './disk.js';
import { resolveInRoot } from './paths.js';
import type { FileData } from './plan.js';
import { configSchema, type FileConfigs, type FileOutput } from './schema.js';
import { refuseSymlinks } from './symlinks.js';

/** The longest content the schema accepts, in characters; UTF-8 takes at most 4 bytes each. */
const MAX_CONTENT_CHARS = (configSchema.properties as { content: { maxLength: number } }).content
  .maxLength;
const MAX_CONTENT_BYTES = 4 * MAX_CONTENT_CHARS;

type Observed = ObserveResult<FileConfigs, FileOutput, FileData>;

/**
 * Reads the file a resource names and changes nothing: no directory is made, no
 * link followed (a link anywhere below the project's directory, the file itself
 * included, is refused as in `sync`), the file opened read-only. `exists: false`
 * when the file, or the project's directory, is not there. The content is given
 * only when it is one the schema can hold (UTF-8, within `maxLength`) and the
 * file is readable; the mode always. `data` says the resource holds this file,
 * which is what an import keeps so that updates and a delete may change it later.
 */
export async function observeFile(
  root: string,
  { resource }: SyncInput<FileConfigs, FileOutput, FileData>,
): Promise<Observed> {
  const configs = resource.spec.configs;
  return inProjectDirectory(
    root,
    resource.project,
    async (dir) => {
      const target = resolveInRoot(dir, configs.path);
      await refuseSymlinks(dir, target);
      const info = await lstat(target).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return undefined;
        throw err;
      });
      if (!info) return { exists: false };
      if (!info.isFile())
        throw new TerminalError(
          `${configs.path} is not a regular file, so it is no file's to hold`,
        );
      const bytes = info.size <= MAX_CONTENT_BYTES ? await readBytes(target) : undefined;
      const content = bytes && decodedContent(bytes);
      const mode = info.mode & 0o777;
      return {
        exists: true,
        configs: {
          path: configs.path,
          ...(content !== undefined && { content }),
          mode: spelledMode(mode, configs.mode),
        },
        output: {
          path: configs.path,
          size: info.size,
          ...(bytes && { sha256: contentChecksum(bytes) }),
          mode: `0${mode.toString(8)}`,
          mtime: info.mtime.toISOString(),
        } as FileOutput,
        data: { pending: [], written: configs.path },
      };
    },
    { ifMissing: (): Observed => ({ exists: false }) },
  );
}

/** The bytes, or undefined when the file may not be read (mode 0200, another owner). */
async function readBytes(target: string): Promise<Buffer | undefined> {
  // O_NOFOLLOW: a link swapped in since the lstat is not read through; O_NONBLOCK: nor does a FIFO hang the read.
  const handle = await open(
    target,
    constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
  ).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EACCES' || err.code === 'EPERM') return undefined;
    throw err;
  });
  if (!handle) return undefined;
  try {
    if (!(await handle.stat()).isFile()) return undefined;
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** The content as the schema holds it: valid UTF-8 within `maxLength`, else nothing (it cannot be written back as is). */
function decodedContent(bytes: Buffer): string | undefined {
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    return text.length <= MAX_CONTENT_CHARS ? text : undefined;
  } catch {
    return undefined;
  }
}

/** The mode as the resource spells it when it is that mode (`644` and `0644`), so a spelling is never drift. */
function spelledMode(mode: number, configured: string | undefined): string {
  if (configured !== undefined && parseInt(configured, 8) === mode) return configured;
  return `0${mode.toString(8).padStart(3, '0')}`;
}
