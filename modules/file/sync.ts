import { chmod, rm, stat, utimes } from 'node:fs/promises';

import { type Resource, type StepContext, stepwise } from '../../src/sdk/index.js';
import { contentChecksum, inProjectDirectory, modeOf } from './disk.js';
import { resolveInRoot } from './paths.js';
import { type FileData, planFile } from './plan.js';
import { type WriteReceipts, writeReceipts } from './receipts.js';
import type { FileConfigs, FileOutput } from './schema.js';
import { refuseSymlinks } from './symlinks.js';
import { isOwnEarlierWrite, notOurs, writeFile } from './write.js';

type FileResource = Resource<FileConfigs, FileOutput, FileData>;

interface StepInput {
  /** The project's directory. */
  dir: string;
  target: string;
  configs: FileConfigs;
  data: FileData;
  /** The resource holds the file at its path (it wrote it, and the path did not move since). */
  owned: boolean;
  receipts: WriteReceipts;
  now: Date;
}

/**
 * `plan` and `sync` of the file module (`stepwise`): one step per call, each idempotent
 * (writing the same bytes again, removing what is gone, are no-ops). Everything happens
 * in the project's own directory under the root, and every path a message shows is
 * relative to it. A step that writes records the path it holds in `data.written`.
 */
export function fileSteps(root: string) {
  /** Runs a step in the project's directory, once no link stands on the way to the target. */
  const step =
    (run: (input: StepInput) => Promise<Partial<FileData> | void>, finalMayBeLink = false) =>
    (resource: FileResource, ctx: StepContext) =>
      inProjectDirectory(root, resource.project, async (dir) => {
        const { configs } = resource.spec;
        const data = resource.state.data ?? { pending: [] };
        const target = resolveInRoot(dir, configs.path);
        await refuseSymlinks(dir, target, { finalMayBeLink });
        const receipts = writeReceipts(root, { urn: resource.urn, createdAt: resource.created_at });
        const owned = data.written === configs.path;
        return run({ dir, target, configs, data, owned, receipts, now: ctx.now() });
      });

  return stepwise<FileConfigs, FileOutput, FileData>({
    plan: planFile,
    steps: {
      write: step(async ({ target, configs, owned, receipts }) => {
        await writeFile(target, configs, { replace: owned, receipts });
        return { written: configs.path };
      }),
      chmod: step(async ({ target, configs, owned }) => {
        if (!owned) throw notOurs(configs.path);
        await chmod(target, modeOf(configs));
      }),
      touch: step(async ({ target, configs, owned, receipts, now }) => {
        if (!owned || !(await exists(target)))
          await writeFile(target, configs, { replace: false, receipts });
        await utimes(target, now, now);
        return { written: configs.path };
      }),
      remove: step(async ({ dir, target, configs, data, owned, receipts }) => {
        if (data.written !== undefined) await removeIn(dir, data.written);
        // A write whose write-back was lost (a crash) left the file unrecorded: its receipt proves it is this resource's.
        if (!owned && (await isOwnEarlierWrite(target, configs, receipts)))
          await rm(target, { force: true });
        await receipts.forget();
      }, true),
      remove_previous: step(async ({ dir, configs, data }) => {
        if (data.previous_path !== undefined && data.previous_path !== configs.path)
          await removeIn(dir, data.previous_path);
      }, true),
    },
    output: (resource) =>
      inProjectDirectory(root, resource.project, async (dir) => {
        const target = resolveInRoot(dir, resource.spec.configs.path);
        await refuseSymlinks(dir, target);
        return describe(target, resource.spec.configs);
      }),
  });
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
