import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { spawnSteward } from '../helpers/child-steward.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { testDatabase } from '../helpers/test-database.js';

const BUNDLE = fileURLToPath(new URL('../../dist/src/cli.js', import.meta.url));

/**
 * `npm run build` writes the CLI as one file (scripts/bundle-cli.mjs). It must load nothing of
 * dist/ but the SDK (one copy of its classes for Steward and user modules), and every file it
 * took in must still find what lies beside that file (import.meta.url rewritten per file).
 */
describeOneDialect('sqlite', 'the CLI bundle', () => {
  it('imports the SDK from its files and no other file of dist/', () => {
    const text = readFileSync(BUNDLE, 'utf8');
    const relative = [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map(
      (m) => m[1],
    );
    expect(new Set(relative)).toEqual(new Set(['./sdk/index.js']));
    // Every import.meta.url is an address relative to the bundle, never the bundle's own.
    expect(text).not.toMatch(/fileURLToPath\(import\.meta\.url\)/);
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
