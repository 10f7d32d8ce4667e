import { chmod, rm, stat, utimes } from 'node:fs/promises';

import type { SyncContext, SyncInput, SyncResult } from '../../src/sdk/index.js';
import { contentChecksum, inProjectDirectory, modeOf } from './disk.js';
import { resolveInRoot } from './paths.js';
import type { FileData, FileStep } from './plan.js';
import { type WriteReceipts, writeReceipts } from './receipts.js';
import type { FileConfigs, FileOutput } from './schema.js';
import { refuseSymlinks } from './symlinks.js';
import { isOwnEarlierWrite, notOurs, writeFile } from './write.js';

/**
 * Does the first pending step and reports the rest: one step a call, each
 * idempotent (writing the same bytes again, removing what is gone, are no-ops).
 * Everything happens in the project's own directory under the root, and every
 * path a message shows is relative to it.
 */
export async function syncFile(
  root: string,
  { resource }: SyncInput<FileConfigs, FileOutput, FileData>,
  ctx: SyncContext,
): Promise<SyncResult<FileOutput, FileData>> {
  const data = resource.state.data ?? { pending: [] };
  const [step, ...rest] = data.pending;
  const configs = resource.spec.configs;
  const receipts = writeReceipts(root, { urn: resource.urn, createdAt: resource.created_at });
  return inProjectDirectory(root, resource.project, async (dir) => {
    const target = resolveInRoot(dir, configs.path);
    let now = data;
    if (step) {
      await refuseSymlinks(dir, target, {
        finalMayBeLink: step === 'remove' || step === 'remove_previous',
      });
      now = await runStep(step, { dir, target, configs, data, receipts, now: ctx.now() });
      ctx.log.debug('file step done', { step });
      if (rest.length) return { status: 'PENDING', data: { ...now, pending: rest } };
    }
    if (resource.state.action === 'delete') return { status: 'COMPLETED', data: { pending: [] } };
    await refuseSymlinks(dir, target);
    const done: FileData =
      now.written === undefined ? { pending: [] } : { pending: [], written: now.written };
    return { status: 'COMPLETED', data: done, output: await describe(target, configs) };
  });
}

interface StepInput {
  /** The project's directory. */
  dir: string;
  target: string;
  configs: FileConfigs;
  data: FileData;
  receipts: WriteReceipts;
  now: Date;
}

/** Runs one step; answers the data with what the resource holds afterwards. */
async function runStep(
  step: FileStep,
  { dir, target, configs, data, receipts, now }: StepInput,
): Promise<FileData> {
  const owned = data.written === configs.path;
  const held: FileData = { ...data, written: configs.path };
  switch (step) {
    case 'write':
      await writeFile(target, configs, { replace: owned, receipts });
      return held;
    case 'chmod':
      if (!owned) throw notOurs(configs.path);
      await chmod(target, modeOf(configs));
      return data;
    case 'touch':
      if (!owned || !(await exists(target)))
        await writeFile(target, configs, { replace: false, receipts });
      await utimes(target, now, now);
      return held;
    case 'remove':
      if (data.written !== undefined) await removeIn(dir, data.written);
      // A write whose write-back was lost (a crash) left the file unrecorded: its receipt proves it is this resource's.
      if (!owned && (await isOwnEarlierWrite(target, configs, receipts)))
        await rm(target, { force: true });
      await receipts.forget();
      return data;
    case 'remove_previous':
      if (data.previous_path !== undefined && data.previous_path !== configs.path)
        await removeIn(dir, data.previous_path);
      return data;
  }
}

/** Removes a file the resource held; a link standing there is removed itself, never followed. */
async function removeIn(dir: string, path: string): Promise<void> {
  const file = resolveInRoot(dir, path);
  await refuseSymlinks(dir, file, { finalMayBeLink: true });
  await rm(file, { force: true });
}

async function exists(target: string): Promise<boolean> {
  return stat(target).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return false;
      throw err;
    },
  );
}

/** The checksum is of the content Steward wrote, so a mode without read permission does not break the sync. */
async function describe(target: string, configs: FileConfigs): Promise<FileOutput> {
  const info = await stat(target);
  return {
    path: configs.path,
    size: info.size,
    sha256: contentChecksum(configs.content ?? ''),
    mode: `0${(info.mode & 0o777).toString(8)}`,
    mtime: info.mtime.toISOString(),
  };
}
