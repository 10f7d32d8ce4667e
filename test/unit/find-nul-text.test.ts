import { findNulText } from '../../src/core/json.js';

/** NUL in a request body is refused on both stores (api/body.ts); findNulText says where it is. */
describe('findNulText (core/json.ts)', () => {
  it('names the first string holding NUL by its JSON pointer, keys escaped as RFC 6901 says', () => {
    expect(findNulText({ 'a/b': { 'c~d': ['x', 'y\u0000'] } })).toBe('/a~1b/c~0d/1');
    expect(findNulText([0, { labels: { team: 'a\u0000b' } }])).toBe('/1/labels/team');
    expect(findNulText({ configs: { 'k\u0000': 1 } })).toBe('/configs/k\u0000');
    expect(findNulText('\u0000')).toBe('/');
  });

  it('finds nothing in a body without NUL, however it is built', () => {
    expect(findNulText({ a: 1, b: [true, null, 'ok', { c: '\\u0000 as text' }] })).toBeUndefined();
    expect(findNulText([])).toBeUndefined();
  });

  it('walks a 1 MiB body without building a pointer for every member', () => {
    const body = JSON.parse(`[${'0,'.repeat(500_000)}"a\\u0000"]`) as unknown;
    expect(findNulText(body)).toBe('/500000');
  });
});
