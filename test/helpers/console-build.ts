import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { waitFor } from './harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CONSOLE_DIR = join(ROOT, 'dist', 'ui');
const LOCK = join(ROOT, 'dist', 'ui.build-lock');
/** A lock older than this was left by a killed run. */
const STALE_LOCK_MS = 120_000;

/**
 * Makes sure dist/ui holds a build of the current ui/ sources (npm test builds
 * first; a suite run on its own may not have). Suites run in parallel: one
 * builds under a lock (a directory: mkdir is atomic), the others wait for it.
 */
export async function ensureConsoleBuilt(): Promise<void> {
  if (isFresh()) return;
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (Date.now() - statSync(LOCK, { throwIfNoEntry: false })!.mtimeMs > STALE_LOCK_MS)
        rmSync(LOCK, { recursive: true, force: true });
      else await waitFor(() => !existsSync(LOCK), 'the console build of another suite', 90_000);
    }
  }
  try {
    if (!isFresh())
      execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-ui.mjs')], {
        cwd: ROOT,
        stdio: 'pipe',
      });
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/** dist/ui/index.html is newer than every file of ui/ and the build script. */
function isFresh(): boolean {
  const built = statSync(join(CONSOLE_DIR, 'index.html'), { throwIfNoEntry: false });
  if (!built) return false;
  const sources = [...files(join(ROOT, 'ui')), join(ROOT, 'scripts', 'build-ui.mjs')];
  return sources.every((file) => statSync(file).mtimeMs <= built.mtimeMs);
}

function* files(dir: string): Generator<string> {
  for (const item of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, item.name);
    if (item.isDirectory()) yield* files(path);
    else yield path;
  }
}
