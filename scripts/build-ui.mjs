#!/usr/bin/env node
// Builds the console (ui/) into dist/ui: esbuild bundles ui/src/main.tsx as minified ES modules
// with code splitting (a page imported lazily, such as the graph and its layout library, is its own
// chunk), content-hashed names (they may cache for good), index.html naming this build's files, and
// a .br and .gz beside every text file (Steward sends them by Accept-Encoding; docs/console.md).
// The build is written to a temporary folder and swapped in, so a running Steward never serves half of one.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'dist', 'ui');
const COMPRESSIBLE = /\.(?:html|js|css|svg)$/;

export async function buildConsole({ quiet = false } = {}) {
  const staging = `${OUT}.building-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { main: 'ui/src/main.tsx', styles: 'ui/styles.css' },
    outdir: staging,
    bundle: true,
    splitting: true,
    format: 'esm',
    minify: true,
    sourcemap: false,
    target: ['es2022'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: '[name]-[hash]',
    chunkNames: 'chunks/[name]-[hash]',
    assetNames: 'assets/[name]-[hash]',
    metafile: true,
    legalComments: 'none',
    logLevel: quiet ? 'error' : 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const outputs = Object.entries(result.metafile.outputs);
  const entry = (name) =>
    basename(outputs.find(([, out]) => out.entryPoint === name)?.[0] ?? fail(name));
  const main = entry('ui/src/main.tsx');
  // The chunks main.js imports statically: preloaded with it, not found only once it is parsed.
  const preloads = result.metafile.outputs[relative(ROOT, join(staging, main))].imports
    .filter((imported) => imported.kind === 'import-statement')
    .map(
      (imported) =>
        `<link rel="modulepreload" href="./${relative(staging, join(ROOT, imported.path))}" />`,
    )
    .join('\n    ');
  const html = readFileSync(join(ROOT, 'ui', 'index.html'), 'utf8')
    .replace('{{main.js}}', main)
    .replace('{{styles.css}}', entry('ui/styles.css'))
    .replace('{{preloads}}', preloads);
  writeFileSync(join(staging, 'index.html'), html);
  for (const file of walk(staging)) if (COMPRESSIBLE.test(file)) precompress(file);
  swapIn(staging);
  if (!quiet) report();
}

function fail(name) {
  throw new Error(`esbuild wrote no output for ${name}`);
}

function precompress(file) {
  const bytes = readFileSync(file);
  writeFileSync(
    `${file}.br`,
    brotliCompressSync(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 11,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
  );
  writeFileSync(`${file}.gz`, gzipSync(bytes, { level: 9 }));
}

/** Two renames: dist/ui is missing only between them, never half-written. */
function swapIn(staging) {
  const old = `${OUT}.old-${process.pid}`;
  try {
    renameSync(OUT, old);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  renameSync(staging, OUT);
  rmSync(old, { recursive: true, force: true });
}

function* walk(dir) {
  for (const item of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, item.name);
    if (item.isDirectory()) yield* walk(path);
    else yield path;
  }
}

function report() {
  for (const file of [...walk(OUT)].sort()) {
    if (file.endsWith('.gz')) continue;
    const size = readFileSync(file).length;
    console.log(`${relative(ROOT, file).padEnd(48)} ${(size / 1024).toFixed(1).padStart(8)} KB`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildConsole();
