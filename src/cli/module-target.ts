import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Config } from '../config.js';
import type { ContractOptions } from '../contract/index.js';
import { CliError, EXIT } from './cli-error.js';

/** What `steward module test <target>` runs the kit on, and how to clean up after it. */
export interface ModuleTarget {
  /** `folder`, `builtin` (a built-in kind's name) or `http` (an HTTP module's URL). */
  type: 'folder' | 'builtin' | 'http';
  options: ContractOptions;
  /** Removes the temporary folders a built-in kind wrote into. */
  cleanup(): void;
}

const URL_PATTERN = /^https?:\/\//i;

/**
 * A target is an HTTP module's URL (`http://…`), else a folder when one exists at
 * that path or it looks like a path, else the name of a built-in kind. `examples` is `--examples DIR`: an
 * HTTP module has none unless it is given (the kit then skips its rules, saying why).
 */
export async function resolveModuleTarget(
  target: string,
  examples: string | undefined,
  config: Readonly<Config>,
): Promise<ModuleTarget> {
  const none = () => {};
  if (URL_PATTERN.test(target)) {
    const { loadHttpModules } = await import('../../modules/http/index.js');
    const [loaded] = await loadHttpModules([target], { timeoutMs: config.httpModuleTimeoutMs });
    return {
      type: 'http',
      options: { definition: loaded!.definition, examplesDir: examples ?? null, config },
      cleanup: none,
    };
  }
  // a path (`./file`, `/srv/mod`) is a folder even when it is missing: the kit then says what is not there
  if ((existsSync(target) && statSync(target).isDirectory()) || /[/\\]|^\./.test(target))
    return {
      type: 'folder',
      options: { dir: target, examplesDir: examples, config },
      cleanup: none,
    };
  return builtinTarget(target, examples, config);
}

/**
 * A built-in kind, built as `steward serve` builds it but writing into temporary
 * folders (its file root and run directory), so the kit never touches the
 * operator's files, and allowed to run the commands and set the variables its
 * own shipped examples name (process, job). Its examples are its folder's `examples/`.
 */
async function builtinTarget(
  kind: string,
  examples: string | undefined,
  config: Readonly<Config>,
): Promise<ModuleTarget> {
  const { builtinModules } = await import('../../modules/index.js');
  const scratch = mkdtempSync(join(tmpdir(), `steward-kit-${kind.replace(/\W/g, '_')}-`));
  const cleanup = () => rmSync(scratch, { recursive: true, force: true });
  try {
    const sandboxed: Config = {
      ...config,
      httpModules: [],
      fileRoot: join(scratch, 'files'),
      runDir: join(scratch, 'run'),
    };
    const origins = (await builtinModules(sandboxed)).map((m) => ({
      kind: m.definition.kind,
      origin: m.origin,
    }));
    const found = origins.find((m) => m.kind === kind);
    if (!found)
      throw new CliError(
        `${kind} is not a folder, an http(s) URL, nor a built-in kind (${origins.map((m) => m.kind).join(', ')})`,
        EXIT.usage,
      );
    const examplesDir = examples ?? join(packageRoot(), found.origin, 'examples');
    const allowed = allowListOf(examplesDir);
    const kitConfig: Config = {
      ...sandboxed,
      allowedCommands: [...config.allowedCommands, ...allowed.commands],
      allowedEnv: [...config.allowedEnv, ...allowed.env],
    };
    const built = await builtinModules(kitConfig);
    const definition = built.find((m) => m.definition.kind === kind)!.definition;
    return { type: 'builtin', options: { definition, examplesDir, config: kitConfig }, cleanup };
  } catch (err) {
    cleanup();
    throw err;
  }
}

/** The commands and `COMMAND:NAME` variables the examples' configs name (process and job). */
function allowListOf(dir: string): { commands: string[]; env: string[] } {
  const commands = new Set<string>();
  const env = new Set<string>();
  if (!existsSync(dir)) return { commands: [], env: [] };
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.json'))) {
    let configs: Record<string, unknown> | undefined;
    try {
      const body = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
        spec?: { configs?: Record<string, unknown> };
        configs?: Record<string, unknown>;
      };
      configs = body.spec?.configs ?? body.configs;
    } catch {
      continue; // the kit reports a bad example itself
    }
    if (typeof configs?.command !== 'string') continue;
    const command = configs.command;
    commands.add(command);
    for (const field of ['env', 'secret_env'])
      for (const name of Object.keys((configs[field] as object | undefined) ?? {}))
        env.add(`${command}:${name}`);
  }
  return { commands: [...commands], env: [...env] };
}

/** The folder holding `modules/` (the repository, or the installed package), from src/cli or dist/src/cli. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'modules', 'file', 'examples'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the built-in modules folder (modules/)');
    dir = parent;
  }
  return resolve(dir);
}
