import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

import { ONE_DIALECT_SUITES } from '../helpers/dialects.js';

/**
 * The store test loop holds by construction (test/helpers/dialects.ts): the store helpers throw
 * outside a dialect block. This catches a suite that opens a store some other way (its own
 * child process, createStore) without being in a dialect block, so it cannot skip PostgreSQL
 * unseen.
 */
const OPENS_A_STORE =
  /\b(startSteward|startFakeSteward|testDatabase|spawnSteward|createSteward|createStore)\(|\bSTEWARD_DB: /;
const IN_A_DIALECT_BLOCK = /\bdescribe(EachDialect|OneDialect)\(/;

function testFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** A suite's own code: the test file, and the helpers beside it when the suite has a folder of its own. */
function sources(file: string): string {
  const own = basename(dirname(file)) === basename(file, '.test.ts');
  const files = own
    ? readdirSync(dirname(file))
        .filter((name) => name.endsWith('.ts'))
        .map((name) => join(dirname(file), name))
    : [file];
  return files.map((path) => readFileSync(path, 'utf8')).join('\n');
}

describe('store suites', () => {
  const suites = ['test', 'modules', 'examples'].flatMap(testFiles).sort();
  const self = 'test/unit/store-suites.test.ts';

  it('open their store only inside describeEachDialect or a listed describeOneDialect', () => {
    const outside = suites.filter(
      (file) =>
        file !== self &&
        OPENS_A_STORE.test(sources(file)) &&
        !IN_A_DIALECT_BLOCK.test(readFileSync(file, 'utf8')),
    );
    expect(outside).toEqual([]);
  });

  it('are listed as one-dialect suites only while they exist', () => {
    const missing = Object.keys(ONE_DIALECT_SUITES)
      .map((key) => key.split(' › ')[0]!)
      .filter((file) => !suites.includes(file));
    expect(missing).toEqual([]);
  });
});
