import { lstat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';

import { TerminalError } from '../../src/sdk/index.js';

/**
 * Refuses a target reached through a symbolic link below the root: the path
 * strings stay inside the root, but the file system would follow the link out
 * of it. Every existing component is looked at with lstat, the target itself
 * too unless `finalMayBeLink` (removing a link removes the link, not what it
 * points to). The root itself may be a link: the operator chose it. Not a
 * retryable failure: someone must remove the link, then retry.
 */
export async function refuseSymlinks(
  root: string,
  target: string,
  { finalMayBeLink = false } = {},
): Promise<void> {
  const absoluteRoot = resolve(root);
  const parts = relative(absoluteRoot, target).split(sep);
  let at = absoluteRoot;
  for (const [i, part] of parts.entries()) {
    at = join(at, part);
    const info = await lstat(at).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (!info) return; // what does not exist yet is made by the module, as a real directory or file
    if (info.isSymbolicLink() && !(finalMayBeLink && i === parts.length - 1)) {
      throw new TerminalError(
        `path ${relative(absoluteRoot, target)} goes through the symbolic link ${relative(absoluteRoot, at)}, which could lead outside the file root; ` +
          'the file module does not follow links under STEWARD_FILE_ROOT: remove the link, then retry',
      );
    }
  }
}
