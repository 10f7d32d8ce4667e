import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { findEntryFile, importModuleEntry } from './module-entry.js';
import { ModuleDefinitionError } from './registry.js';

/**
 * Loads the user's modules: every subfolder of each directory in `paths` whose
 * `index.js` (or .mjs, .cjs, else `index.ts`) exports a definition (default export or
 * `module.exports`), or a function that returns one given the SDK object.
 * Anything wrong stops start-up with a message naming the folder.
 */
export async function loadModulesFromPaths(
  paths: readonly string[],
): Promise<Array<{ definition: unknown; origin: string }>> {
  const found: Array<{ definition: unknown; origin: string }> = [];
  for (const dir of paths) {
    const root = resolve(dir);
    if (!existsSync(root) || !statSync(root).isDirectory()) {
      throw new ModuleDefinitionError(
        root,
        'STEWARD_MODULE_PATHS names a directory that does not exist',
      );
    }
    for (const entry of readdirSync(root, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      // a link to a folder counts as one (`steward module dev` links the module folder it runs)
      const linked =
        entry.isSymbolicLink() &&
        statSync(join(root, entry.name), { throwIfNoEntry: false })?.isDirectory();
      if (
        !(entry.isDirectory() || linked) ||
        entry.name.startsWith('.') ||
        entry.name === 'node_modules'
      )
        continue;
      const folder = join(root, entry.name);
      const file = findEntryFile(folder);
      if (!file) continue;
      found.push({ definition: await importModuleEntry(file, folder), origin: folder });
    }
  }
  return found;
}
