import { createHash } from 'node:crypto';
import { chmod, mkdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { SyncContext, SyncInput, SyncResult } from '../../src/sdk/index.js';
import type { FileData, FileStep } from './plan.js';
import { resolveInRoot, TEMPORARY_SUFFIX } from './paths.js';
import { refuseSymlinks } from './symlinks.js';

/**
 * Does the first pending step and reports the rest: one step a call, each
 * idempotent (writing the same bytes again, removing what is gone, are no-ops).
 */
export async function syncFile(root: string, { resource }: SyncInput, ctx: SyncContext): Promise<SyncResult> {
  const data = (resource.state.data ?? { pending: [] }) as FileData;
  const [step, ...rest] = data.pending;
  const configs = resource.spec.configs as { path: string; content?: string; mode?: string };
  const target = resolveInRoot(root, configs.path);
  if (step) {
    await refuseSymlinks(root, target, { finalMayBeLink: step === 'remove' || step === 'remove_previous' });
    await runStep(step, target, configs, root, data, ctx.now());
    ctx.log.debug('file step done', { step });
    if (rest.length) return { status: 'PENDING', data: { ...data, pending: rest } };
  }
  if (resource.state.action === 'delete') return { status: 'COMPLETED', data: { pending: [] } };
  await refuseSymlinks(root, target);
  return { status: 'COMPLETED', data: { pending: [] }, output: await describe(target, configs.content ?? '') };
}

type FileConfigs = { content?: string; mode?: string };

async function runStep(step: FileStep, target: string, configs: FileConfigs, root: string, data: FileData, now: Date): Promise<void> {
  switch (step) {
    case 'write':
      return writeAtomically(target, configs);
    case 'chmod':
      await chmod(target, modeOf(configs));
      return;
    case 'touch':
      await utimes(target, now, now).catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
        await writeAtomically(target, configs);
        await utimes(target, now, now);
      });
      return;
    case 'remove':
      await rm(target, { force: true });
      return;
    case 'remove_previous': {
      if (!data.previous_path) return;
      const previous = resolveInRoot(root, data.previous_path);
      await refuseSymlinks(root, previous, { finalMayBeLink: true });
      await rm(previous, { force: true });
      return;
    }
  }
}

/** Writes beside the target with the final mode and renames, so a crash never leaves half a file or a wider mode. */
async function writeAtomically(target: string, configs: FileConfigs): Promise<void> {
  await mkdir(dirname(target), { recursive: true });
  const temporary = `${target}${TEMPORARY_SUFFIX}`;
  await rm(temporary, { force: true });
  // 'wx': a link placed at the temporary name after the rm above is refused, never followed.
  await writeFile(temporary, configs.content ?? '', { encoding: 'utf8', mode: modeOf(configs), flag: 'wx' });
  await rename(temporary, target);
}

function modeOf(configs: FileConfigs): number {
  return parseInt(configs.mode ?? '0644', 8);
}

/** The checksum is of the content Steward wrote, so a mode without read permission does not break the sync. */
async function describe(target: string, content: string) {
  const info = await stat(target);
  return {
    path: target,
    size: info.size,
    sha256: createHash('sha256').update(content, 'utf8').digest('hex'),
    mode: `0${(info.mode & 0o777).toString(8)}`,
    mtime: info.mtime.toISOString(),
  };
}
