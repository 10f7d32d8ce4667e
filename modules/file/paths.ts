import { isAbsolute, posix, resolve, sep } from 'node:path';

/**
 * True when a configured path stays inside the root: relative, no ".." segment,
 * no NUL. Pure, so `plan` can refuse the request before anything is stored.
 */
export function isConfinedPath(path: string): boolean {
  if (path.includes('\0') || path.includes('\\') || isAbsolute(path) || posix.isAbsolute(path)) return false;
  const normal = posix.normalize(path);
  return normal !== '.' && normal !== '..' && !normal.startsWith('../') && !path.split('/').includes('..');
}

/** The absolute path of a confined path under `root`; throws if it would escape (defence in depth for sync). */
export function resolveInRoot(root: string, path: string): string {
  const absoluteRoot = resolve(root);
  const target = resolve(absoluteRoot, path);
  if (!isConfinedPath(path) || !target.startsWith(absoluteRoot + sep)) throw new Error(`path ${path} escapes the file root`);
  return target;
}
