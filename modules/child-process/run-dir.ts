import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The directory of one resource under the operator's run dir: `<runDir>/<kind>.<project>.<name>`.
 * Kind, project and name never contain a dot, so two resources never share one.
 */
export function resourceDir(
  runDir: string,
  resource: { kind: string; project: string; name: string },
): string {
  return join(runDir, `${resource.kind}.${resource.project}.${resource.name}`);
}

/** Reads a JSON file; undefined when it does not exist. A corrupt file is an error (retried by the core). */
export async function readJsonFile<T>(path: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return JSON.parse(text) as T;
}

/** Writes beside the target and renames, so a crash never leaves half a record. */
export async function writeJsonAtomic(path: string, value: unknown, mode = 0o600): Promise<void> {
  const temporary = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode });
    await rename(temporary, path);
  } catch (err) {
    await rm(temporary, { force: true });
    throw err;
  }
}
