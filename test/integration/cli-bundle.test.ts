import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { spawnSteward } from '../helpers/child-steward.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { testDatabase } from '../helpers/test-database.js';

const BUNDLE = fileURLToPath(new URL('../../dist/src/cli.js', import.meta.url));
const FOLDER = dirname(BUNDLE);
const CHUNK = /^\.\/cli-chunk-[A-Z0-9]+\.js$/;

/** The relative specifiers a file of the bundle imports: statically, or on demand (`import("…")`). */
function importsOf(file: string): { fixed: string[]; onDemand: string[] } {
  const text = readFileSync(join(FOLDER, file), 'utf8');
  const specifiers = (pattern: RegExp) => [...text.matchAll(pattern)].map((m) => m[1]!);
  return {
    fixed: specifiers(/(?:^|[\s;}])(?:from|import)\s*"(\.{1,2}\/[^"]+)"/g),
    onDemand: specifiers(/\bimport\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g),
  };
}

/**
 * `npm run build` writes the CLI as a bundle in chunks (scripts/bundle-cli.mjs): dist/src/cli.js and
 * the cli-chunk-*.js beside it. It must load nothing of dist/ but the SDK (one copy of its classes
 * for Steward and user modules), every file it took in must still find what lies beside that file
 * (import.meta.url rewritten per file), and a client command must not load the server side.
 */
describeOneDialect('sqlite', 'the CLI bundle', () => {
  const files = ['cli.js', ...readdirSync(FOLDER).filter((name) => CHUNK.test(`./${name}`))];

  it('imports the SDK from its files, its own chunks, and no other file of dist/', () => {
    expect(files.length).toBeGreaterThan(1);
    for (const file of files) {
      const { fixed, onDemand } = importsOf(file);
      for (const specifier of [...fixed, ...onDemand])
        expect(specifier === './sdk/index.js' || CHUNK.test(specifier) ? file : specifier).toBe(
          file,
        );
      // Every import.meta.url is an address relative to the bundle, never the file's own.
      expect(readFileSync(join(FOLDER, file), 'utf8')).not.toMatch(
        /fileURLToPath\(import\.meta\.url\)/,
      );
    }
  });

  it('leaves the server side to chunks a client command does not load', () => {
    // What `steward resource get` loads: cli.js and the chunks it imports statically, transitively.
    const loaded = new Set<string>();
    const visit = (file: string): void => {
      if (loaded.has(file)) return;
      loaded.add(file);
      for (const specifier of importsOf(file).fixed)
        if (CHUNK.test(specifier)) visit(specifier.slice(2));
    };
    visit('cli.js');
    // Not vacuous: cli.js's static imports of its chunks were found.
    expect(loaded.size).toBeGreaterThan(1);
    const text = [...loaded].map((file) => readFileSync(join(FOLDER, file), 'utf8')).join('\n');
    // esbuild heads each file it took in with its path, as a comment.
    for (const serverPackage of ['express', 'kysely', 'ajv', 'winston', 'prom-client'])
      expect(text).not.toContain(`node_modules/${serverPackage}/`);
    // …and the whole server side is there, on demand.
    const all = files.map((file) => readFileSync(join(FOLDER, file), 'utf8')).join('\n');
    expect(all).toContain('node_modules/express/');
  });

  it('finds the console and the API schemas beside the files it was made from', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steward-cli-bundle-'));
    const steward = await spawnSteward({ STEWARD_DB: await testDatabase(dir) });
    try {
      const page = await fetch(`${steward.url}/ui/`, {
        headers: { 'accept-encoding': 'identity' },
      });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<html');
      // A body the API's schemas refuse: they were found and compiled.
      const bad = await fetch(`${steward.api}/resources`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'file', project: 'p' }),
      });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { code: string } }).error.code).toBe(
        'invalid_request',
      );
    } finally {
      expect(await steward.stop()).toBe(0);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
