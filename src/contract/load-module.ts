import { resolve } from 'node:path';

import {
  ENTRY_FILES,
  findEntryFile,
  importModuleEntry,
  type ImportOptions,
} from '../core/modules/module-entry.js';
import { trapRequiresUnder } from './require-trap.js';

/**
 * Loads one module folder the way STEWARD_MODULE_PATHS does (src/core/modules/module-entry.ts):
 * its `index.js` (or .mjs/.cjs, else `index.ts`, transpiled), default export or
 * `module.exports`, called with the SDK object when it is a function.
 * Its `require`s of built-ins are routed through the traps first (require-trap.ts).
 * Returns the problem as a string instead of throwing, for the report.
 */
export async function loadModuleFolder(
  dir: string,
  options: ImportOptions = {},
): Promise<{ definition: unknown } | { problem: string }> {
  const folder = resolve(dir);
  const file = findEntryFile(folder);
  if (!file) return { problem: `${folder} has no ${ENTRY_FILES.join(', ')}` };
  // before it loads: a built-in it destructures from `require` must still meet the traps
  trapRequiresUnder(folder);
  try {
    return { definition: await importModuleEntry(file, folder, options) };
  } catch (err) {
    return { problem: (err as Error).message };
  }
}
