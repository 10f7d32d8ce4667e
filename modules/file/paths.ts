import { isAbsolute, posix, resolve, sep } from 'node:path';

/** The longest name one path segment may have on Linux (NAME_MAX), in bytes. */
const MAX_SEGMENT_BYTES = 255;
/** Kept from the time temporary files were named `<name>.steward-tmp`: a file name leaves this much room still. */
export const TEMPORARY_SUFFIX = '.steward-tmp';
/** A project name (docs/design.md §3): one path segment, never "." or "..". */
const PROJECT_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/**
 * True when a configured path names a file inside the root: relative, no ".."
 * segment, no NUL or backslash, not the root itself and not a directory (a
 * trailing "/"), and no segment longer than the file system allows (the file's
 * name a little shorter, for its temporary name). Pure, so
 * `plan` can refuse the request before anything is stored.
 */
export function isConfinedPath(path: string): boolean {
  if (path.includes('\0') || path.includes('\\') || isAbsolute(path) || posix.isAbsolute(path))
    return false;
  const segments = path.split('/');
  const fileName = segments[segments.length - 1]!;
  if (segments.some((segment) => Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES))
    return false;
  if (Buffer.byteLength(fileName + TEMPORARY_SUFFIX, 'utf8') > MAX_SEGMENT_BYTES) return false;
  const normal = posix.normalize(path);
  return (
    normal !== '.' &&
    normal !== '..' &&
    !normal.endsWith('/') &&
    !normal.startsWith('../') &&
    !segments.includes('..')
  );
}

/**
 * The key of the file a path names in a project (ModuleDefinition.claimKey): two
 * spellings of one file (`a`, `./a`, `b//a/../a` is refused earlier) give one key.
 */
export function fileClaimKey(project: string, path: string): string {
  return `${project}/${posix.normalize(path)}`;
}

/** The project's own directory under the file root: every file of the project lives in it. */
export function projectDirectory(root: string, project: string): string {
  if (!PROJECT_PATTERN.test(project))
    throw new Error(`project ${JSON.stringify(project)} is not a project name`);
  return resolve(root, project);
}

/** The absolute path of a confined path under `root`; throws if it would escape (defence in depth for sync). */
export function resolveInRoot(root: string, path: string): string {
  const absoluteRoot = resolve(root);
  const target = resolve(absoluteRoot, path);
  if (!isConfinedPath(path) || !target.startsWith(absoluteRoot + sep))
    throw new Error(`path ${path} escapes the file root`);
  return target;
}
