import { createHash } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { SyncContext, SyncInput, SyncResult } from '../../src/sdk/index.js';
import type { FileData, FileStep } from './plan.js';
import { resolveInRoot } from './paths.js';

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
    await runStep(step, target, configs, root, data);
    ctx.log.debug('file step done', { step });
    if (rest.length) return { status: 'PENDING', data: { ...data, pending: rest } };
  }
  if (resource.state.action === 'delete') return { status: 'COMPLETED', data: { pending: [] } };
  return { status: 'COMPLETED', data: { pending: [] }, output: await describe(target) };
}

async function runStep(step: FileStep, target: string, configs: { content?: string; mode?: string }, root: string, data: FileData): Promise<void> {
  switch (step) {
    case 'write': {
      await mkdir(dirname(target), { recursive: true });
      // Write beside the target and rename, so a crash never leaves half a file.
      const temporary = `${target}.steward-tmp`;
      await writeFile(temporary, configs.content ?? '', 'utf8');
      await rename(temporary, target);
      return;
    }
    case 'chmod':
      await chmod(target, parseInt(configs.mode ?? '0644', 8));
      return;
    case 'touch': {
      const now = new Date();
      await utimes(target, now, now).catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, configs.content ?? '', 'utf8');
      });
      return;
    }
    case 'remove':
      await rm(target, { force: true });
      return;
    case 'remove_previous':
      if (data.previous_path) await rm(resolveInRoot(root, data.previous_path), { force: true });
      return;
  }
}

async function describe(target: string) {
  const [info, bytes] = await Promise.all([stat(target), readFile(target)]);
  return {
    path: target,
    size: info.size,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    mode: `0${(info.mode & 0o777).toString(8)}`,
    mtime: info.mtime.toISOString(),
  };
}
