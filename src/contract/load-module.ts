import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { trapRequiresUnder } from './require-trap.js';

const ENTRY_FILES = ['index.js', 'index.mjs', 'index.cjs'];

/**
 * Loads one module folder the way STEWARD_MODULE_PATHS does (src/core/modules/module-loader.ts):
 * its `index.js` (or .mjs/.cjs), default export or `module.exports`.
 * Its `require`s of built-ins are routed through the traps first (require-trap.ts).
 * Returns the problem as a string instead of throwing, for the report.
 */
export async function loadModuleFolder(
  dir: string,
): Promise<{ definition: unknown } | { problem: string }> {
  const folder = resolve(dir);
  const file = ENTRY_FILES.map((name) => join(folder, name)).find((candidate) =>
    existsSync(candidate),
  );
  if (!file) return { problem: `${folder} has no ${ENTRY_FILES.join(', ')}` };
  // before it loads: a built-in it destructures from `require` must still meet the traps
  trapRequiresUnder(folder);
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    return { problem: `${file} failed to load: ${(err as Error).message}` };
  }
  const candidate = loaded.default ?? loaded;
  const nested = (candidate as Record<string, unknown> | undefined)?.default;
  return {
    definition:
      typeof nested === 'object' && nested !== null && 'kind' in nested ? nested : candidate,
  };
}
