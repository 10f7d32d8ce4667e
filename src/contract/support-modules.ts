import { builtinModules } from '../../modules/index.js';
import type { Config } from '../config.js';
import { loadModulesFromPaths } from '../core/modules/module-loader.js';
import { message } from './converge.js';

type Loaded = { definition: unknown; origin: string };

const kindOf = (definition: unknown): unknown => (definition as { kind?: unknown } | null)?.kind;

/**
 * The modules loaded beside the module under test so that its fixtures can be
 * created. With `given` (the `supportModules` option) those, all of them.
 * Otherwise, only for kinds the fixtures need, the first module of that kind
 * that Steward itself would load with `config`: the built-in modules, then the
 * folders of `config.modulePaths` (STEWARD_MODULE_PATHS). A kind nobody serves
 * is a problem to report, as is a module that fails to load.
 */
export async function resolveSupportModules(
  needed: readonly string[],
  underTest: string,
  given: readonly unknown[] | undefined,
  config: Readonly<Config>,
): Promise<{ modules: Loaded[]; problems: string[] }> {
  const kinds = [...new Set(needed)].filter((kind) => kind !== underTest);
  if (given) {
    const modules = given.map((definition, i) => ({ definition, origin: `supportModules[${i}]` }));
    const missing = kinds.filter((kind) => !modules.some((m) => kindOf(m.definition) === kind));
    return {
      modules,
      problems: missing.map(
        (kind) => `the fixtures need kind ${kind}, which no module in supportModules serves`,
      ),
    };
  }
  if (kinds.length === 0) return { modules: [], problems: [] };
  let candidates: Loaded[];
  try {
    candidates = [
      ...(await builtinModules(config)),
      ...(await loadModulesFromPaths(config.modulePaths)),
    ];
  } catch (err) {
    return { modules: [], problems: [`the support modules did not load: ${message(err)}`] };
  }
  const modules: Loaded[] = [];
  const problems: string[] = [];
  for (const kind of kinds) {
    const found = candidates.find((candidate) => kindOf(candidate.definition) === kind);
    if (found) modules.push(found);
    else
      problems.push(
        `the fixtures need kind ${kind}: it is not a built-in kind, nor in a module folder of STEWARD_MODULE_PATHS`,
      );
  }
  return { modules, problems };
}
