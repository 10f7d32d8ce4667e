import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { readTokensFile } from '../../src/api/auth/tokens-file.js';

/** The metrics role reads /metrics, which counts every project: it is granted on ["*"] only. */
describe('the metrics role in the tokens file', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'steward-grants-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const read = (projects: string[]) => {
    const file = join(dir, 'tokens.json');
    writeFileSync(
      file,
      JSON.stringify({
        tokens: [{ name: 'prom', role: 'metrics', projects, sha256: 'a'.repeat(64) }],
      }),
    );
    return () => readTokensFile(file);
  };

  it('is accepted on every project', () => {
    expect(read(['*'])()).toEqual([
      { name: 'prom', role: 'metrics', projects: ['*'], sha256: 'a'.repeat(64) },
    ]);
  });

  it('is refused on named projects, saying why', () => {
    expect(read(['web'])).toThrow(
      'tokens[0]: the metrics role is granted on projects ["*"] only (/metrics counts every project)',
    );
  });
});
