import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import type * as TS from 'typescript';

import { moduleSdk } from '../../sdk/index.js';
import { ModuleDefinitionError } from './registry.js';

/** The files a module folder may start from, in this order: `index.ts` only when no JS one is there. */
export const ENTRY_FILES = ['index.js', 'index.mjs', 'index.cjs', 'index.ts'] as const;

/** The `typescript` package. */
type TypeScript = typeof TS;

export interface ImportOptions {
  /** Finds the `typescript` package for an `index.ts`; throws when there is none. Default: the folder's own, else Steward's. */
  loadTypescript?: (folder: string) => Promise<TypeScript>;
}

/** The entry file of a module folder, or undefined when it has none. */
export function findEntryFile(folder: string): string | undefined {
  return ENTRY_FILES.map((name) => join(folder, name)).find((file) => existsSync(file));
}

/**
 * Imports a module folder's entry file and returns its definition: the default export (or
 * `module.exports`), or what it returns when that is a function (a factory), called with the
 * SDK object. An `index.ts` is transpiled first (no type check). Throws ModuleDefinitionError.
 */
export async function importModuleEntry(
  file: string,
  folder: string,
  options: ImportOptions = {},
): Promise<unknown> {
  let loaded: Record<string, unknown>;
  try {
    loaded = (
      file.endsWith('.ts')
        ? await importTranspiled(file, folder, options.loadTypescript ?? loadTypescript)
        : await import(pathToFileURL(file).href)
    ) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof ModuleDefinitionError) throw err;
    throw new ModuleDefinitionError(folder, `failed to load: ${(err as Error).message}`);
  }
  // ESM default export, or CommonJS module.exports (which Node exposes as default).
  const candidate = loaded.default ?? loaded;
  const nested = (candidate as Record<string, unknown> | undefined)?.default;
  const exported =
    typeof nested === 'object' && nested !== null && 'kind' in nested ? nested : candidate;
  if (typeof exported !== 'function') return exported;
  try {
    return await (exported as (sdk: typeof moduleSdk) => unknown)(moduleSdk);
  } catch (err) {
    throw new ModuleDefinitionError(
      folder,
      `its exported function (a module factory, called with the SDK) threw: ${(err as Error).message}`,
    );
  }
}

async function loadTypescript(folder: string): Promise<TypeScript> {
  let specifier = 'typescript';
  try {
    specifier = pathToFileURL(createRequire(join(folder, 'index.ts')).resolve('typescript')).href;
  } catch {
    // not in the module's own node_modules: Steward's
  }
  const loaded = (await import(specifier)) as { default?: TypeScript } & TypeScript;
  return loaded.default ?? loaded;
}

/**
 * Transpiles `index.ts` to an ES module in a temporary folder of its own (never beside the
 * user's files) and imports it. Its imports are pointed back at the module folder: a
 * relative or package import resolves from there, as it would for an `index.js` (a dynamic
 * `import()` of a relative path does not: the temporary folder is gone by then).
 */
async function importTranspiled(
  file: string,
  folder: string,
  load: (folder: string) => Promise<TypeScript>,
): Promise<unknown> {
  let ts: TypeScript;
  try {
    ts = await load(folder);
  } catch {
    throw new ModuleDefinitionError(
      folder,
      'index.ts needs `npm install typescript` (Steward transpiles it with that package), or ship an index.js',
    );
  }
  const source = await readFile(file, 'utf8');
  const { outputText, diagnostics = [] } = ts.transpileModule(source, {
    fileName: file,
    reportDiagnostics: true,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      sourceMap: false,
      inlineSourceMap: false,
    },
    transformers: { before: [pointImportsAt(ts, folder)] },
  });
  const syntax = diagnostics.find((d) => d.category === ts.DiagnosticCategory.Error);
  if (syntax) {
    const where =
      syntax.file && syntax.start !== undefined
        ? `:${syntax.file.getLineAndCharacterOfPosition(syntax.start).line + 1}`
        : '';
    const text = ts.flattenDiagnosticMessageText(syntax.messageText, ' ');
    throw new ModuleDefinitionError(folder, `index.ts${where}: ${text}`);
  }
  const dir = await mkdtemp(join(tmpdir(), 'steward-module-'));
  const out = join(dir, 'index.mjs');
  await writeFile(out, outputText);
  // Its package imports resolve as from the module folder: through a link to its node_modules.
  const packages = nearestNodeModules(folder);
  if (packages) await symlink(packages, join(dir, 'node_modules'), 'dir');
  try {
    // Once imported, the module lives in memory: the file is not needed afterwards.
    return await import(pathToFileURL(out).href);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A transformer that points each static relative import at the file it names in the module folder. */
function pointImportsAt(ts: TypeScript, folder: string) {
  const target = (spec: TS.Expression | undefined) =>
    spec && ts.isStringLiteral(spec) && /^\.\.?\//.test(spec.text)
      ? pathToFileURL(resolve(folder, spec.text)).href
      : undefined;
  return (context: TS.TransformationContext) => (source: TS.SourceFile) => {
    const { factory } = context;
    const visit = (node: TS.Node): TS.Node => {
      if (ts.isImportDeclaration(node)) {
        const to = target(node.moduleSpecifier);
        return to === undefined
          ? node
          : factory.updateImportDeclaration(
              node,
              node.modifiers,
              node.importClause,
              factory.createStringLiteral(to),
              node.attributes,
            );
      }
      if (ts.isExportDeclaration(node)) {
        const to = target(node.moduleSpecifier);
        return to === undefined
          ? node
          : factory.updateExportDeclaration(
              node,
              node.modifiers,
              node.isTypeOnly,
              node.exportClause,
              factory.createStringLiteral(to),
              node.attributes,
            );
      }
      return node;
    };
    return ts.visitEachChild(source, visit, context);
  };
}

/** The nearest `node_modules` at or above the module folder, where its packages are. */
function nearestNodeModules(folder: string): string | undefined {
  for (let dir = folder; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules'))) return join(dir, 'node_modules');
    if (dirname(dir) === dir) return undefined;
  }
}
