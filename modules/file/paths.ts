import { isAbsolute, posix, resolve, sep } from 'node:path';

/** The longest name one path segment may have on Linux (NAME_MAX), in bytes. */
const MAX_SEGMENT_BYTES = 255;
/** Written beside the target, then renamed over it (sync.ts): the file's own name must leave room for it. */
export const TEMPORARY_SUFFIX = '.steward-tmp';

/**
 * True when a configured path names a file inside the root: relative, no ".."
 * segment, no NUL or backslash, not the root itself and not a directory (a
 * trailing "/"), and no segment longer than the file system allows (the file's
 * name a little shorter, for its temporary name). Pure, so
 * `plan` can refuse the request before anything is stored.
 */
export function isConfinedPath(path: string): boolean {
  if (path.includes('\0') || path.includes('\\') || isAbsolute(path) || posix.isAbsolute(path)) return false;
  const segments = path.split('/');
  const fileName = segments[segments.length - 1]!;
  if (segments.some((segment) => Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES)) return false;
  if (Buffer.byteLength(fileName + TEMPORARY_SUFFIX, 'utf8') > MAX_SEGMENT_BYTES) return false;
  const normal = posix.normalize(path);
  return normal !== '.' && normal !== '..' && !normal.endsWith('/') && !normal.startsWith('../') && !segments.includes('..');
}

/** The absolute path of a confined path under `root`; throws if it would escape (defence in depth for sync). */
export function resolveInRoot(root: string, path: string): string {
  const absoluteRoot = resolve(root);
  const target = resolve(absoluteRoot, path);
  if (!isConfinedPath(path) || !target.startsWith(absoluteRoot + sep)) throw new Error(`path ${path} escapes the file root`);
  return target;
}
