import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { ModuleDefinitionError } from './registry.js';

const ENTRY_FILES = ['index.js', 'index.mjs', 'index.cjs'];

/**
 * Loads the user's modules: every subfolder of each directory in `paths` whose
 * `index.js` exports a definition (default export or `module.exports`).
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
      const file = ENTRY_FILES.map((name) => join(folder, name)).find((candidate) =>
        existsSync(candidate),
      );
      if (!file) continue;
      found.push({ definition: await importDefinition(file, folder), origin: folder });
    }
  }
  return found;
}

async function importDefinition(file: string, folder: string): Promise<unknown> {
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    throw new ModuleDefinitionError(folder, `failed to load: ${(err as Error).message}`);
  }
  // ESM default export, or CommonJS module.exports (which Node exposes as default).
  const candidate = loaded.default ?? loaded;
  const nested = (candidate as Record<string, unknown> | undefined)?.default;
  return typeof nested === 'object' && nested !== null && 'kind' in nested ? nested : candidate;
}
