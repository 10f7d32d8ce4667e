import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import type { Command } from 'commander';

import { KIND_PATTERN } from '../core/names.js';
import { CliError, EXIT } from './cli-error.js';
import {
  EXAMPLE,
  EXAMPLE_ACTIONS,
  GITIGNORE,
  type Lang,
  packageJson,
  readme,
} from './module-templates/common.js';
import { JS_INDEX } from './module-templates/js.js';
import { PYTHON_SERVER } from './module-templates/python.js';
import { TS_INDEX } from './module-templates/ts.js';

const LANGS: readonly Lang[] = ['js', 'ts', 'python'];

/** `steward module init NAME [--lang js|ts|python] [--dir DIR]`: a module folder that passes the kit. */
export function registerModuleInitCommand(moduleCommand: Command): void {
  moduleCommand
    .command('init <name>')
    .description(
      'scaffold a module of kind <name> in DIR/<name>: the module, examples for the kit, a README and a test command',
    )
    .option('--lang <lang>', 'js, ts or python (an HTTP module)', 'js')
    .option('--dir <dir>', 'where to create the <name> folder', '.')
    .action((name: string, options: { lang: string; dir: string }) => {
      const folder = scaffoldModule(name, options.lang, options.dir);
      const next =
        options.lang === 'python'
          ? [
              `python3 ${join(folder, 'server.py')} --port 9000 &`,
              `steward module test http://127.0.0.1:9000 --examples ${join(folder, 'examples')}`,
              `steward module dev ${folder}`,
            ]
          : [`steward module test ${folder}`, `steward module dev ${folder}`];
      process.stdout.write(
        `created ${folder} (kind ${name}, ${options.lang}); see its README.md. Next:\n${next.map((line) => `  ${line}\n`).join('')}`,
      );
    });
}

/**
 * Writes the scaffold into `dir/name` and returns that folder. Refuses a name that
 * is not a kind name, an unknown language, and a folder that exists and is not empty.
 */
export function scaffoldModule(name: string, lang: string, dir: string): string {
  if (!KIND_PATTERN.test(name))
    throw new CliError(
      `"${name}" is not a kind name: a lowercase letter, then 1 to 62 lowercase letters, digits or _ (${KIND_PATTERN.source})`,
      EXIT.usage,
    );
  if (!LANGS.includes(lang as Lang))
    throw new CliError(`--lang must be js, ts or python, not "${lang}"`, EXIT.usage);
  const folder = resolve(dir, name);
  if (existsSync(folder) && (!statSync(folder).isDirectory() || readdirSync(folder).length > 0))
    throw new CliError(`${folder} already exists and is not an empty folder; nothing was written`);
  const dirVar = `${name.toUpperCase()}_DIR`;
  const fill = (text: string) =>
    text.replaceAll('__KIND__', name).replaceAll('__DIR_VAR__', dirVar);
  const files: Record<string, string> = {
    'README.md': readme(name, lang as Lang, dirVar),
    '.gitignore': GITIGNORE,
    'examples/hello.json': EXAMPLE,
    'examples/hello.actions.json': EXAMPLE_ACTIONS,
    ...(lang === 'js' && { 'index.js': fill(JS_INDEX), 'package.json': packageJson(name, 'js') }),
    ...(lang === 'ts' && { 'index.ts': fill(TS_INDEX), 'package.json': packageJson(name, 'ts') }),
    ...(lang === 'python' && { 'server.py': fill(PYTHON_SERVER) }),
  };
  mkdirSync(join(folder, 'examples'), { recursive: true });
  for (const [file, text] of Object.entries(files))
    writeFileSync(join(folder, file), text, { mode: file === 'server.py' ? 0o755 : 0o644 });
  return folder;
}
