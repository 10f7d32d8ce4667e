// The second pass of `npm test`: every suite that opens its store through describeEachDialect
// (test/helpers/dialects.ts), or has a block on PostgreSQL only, on PostgreSQL (STEWARD_TEST_STORE=postgres makes the loop run its
// PostgreSQL block, on a throwaway cluster per test file). Found by reading the test files, so a
// new store suite cannot be left out; suites on one database only are listed in dialects.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import base from './jest.config.js';

const ROOT = dirname(fileURLToPath(import.meta.url));
const LOOP = /\bdescribeEachDialect\(|\bdescribeOneDialect\(\s*'postgres'/;

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

export const storeSuites = ['test', 'modules', 'examples']
  .flatMap((dir) => {
    try {
      return testFiles(join(ROOT, dir));
    } catch {
      return []; // no such folder
    }
  })
  .filter((path) => LOOP.test(readFileSync(path, 'utf8')))
  .map((path) => relative(ROOT, path))
  .sort();

export default {
  ...base,
  testMatch: storeSuites.map((path) => `<rootDir>/${path}`),
};
