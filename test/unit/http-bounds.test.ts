import {
  connectionCap,
  DESCRIPTOR_RESERVE,
  readOpenFilesLimit,
} from '../../src/api/http-server.js';
import { nestsDeeperThan } from '../../src/api/json-depth.js';
import { boundedPage, rowsToLoad } from '../../src/core/requests/bounded-page.js';

const deeper = (text: string, levels: number) => nestsDeeperThan(Buffer.from(text), levels);

describe('nestsDeeperThan', () => {
  it('counts arrays and objects, not brackets inside strings or after escapes', () => {
    expect(deeper('[[1]]', 2)).toBe(false);
    expect(deeper('[[[1]]]', 2)).toBe(true);
    expect(deeper('{"a":{"b":[1]}}', 3)).toBe(false);
    expect(deeper('{"a":{"b":[1]}}', 2)).toBe(true);
    expect(deeper('["[[[[", "\\"[[[[", "\\\\"]', 1)).toBe(false);
    expect(deeper('[[], [], {}]', 2)).toBe(false);
    expect(deeper('"ünïcödé [[[" ', 0)).toBe(false);
  });

  it('stops at the first level too many: 1 MiB of `[` is refused at once', () => {
    expect(deeper('['.repeat(1024 * 1024), 100)).toBe(true);
  });
});

describe('connection cap', () => {
  it('reads the soft open-files limit from /proc/self/limits', () => {
    const limits =
      'Limit                     Soft Limit           Hard Limit           Units     \nMax open files            20000                524288               files     \n';
    expect(readOpenFilesLimit(() => limits)).toBe(20000);
    expect(readOpenFilesLimit(() => limits.replace('20000', 'unlimited'))).toBe(
      Number.MAX_SAFE_INTEGER,
    );
    expect(readOpenFilesLimit(() => 'nothing here')).toBeUndefined();
    expect(
      readOpenFilesLimit(() => {
        throw new Error('ENOENT');
      }),
    ).toBeUndefined();
  });

  it('keeps a reserve of descriptors whatever the setting says', () => {
    expect(connectionCap(0, 20000)).toBe(20000 - DESCRIPTOR_RESERVE);
    expect(connectionCap(100, 20000)).toBe(100);
    expect(connectionCap(50_000, 20000)).toBe(20000 - DESCRIPTOR_RESERVE);
    expect(connectionCap(0, undefined)).toBe(1024 - DESCRIPTOR_RESERVE);
    expect(connectionCap(0, 100)).toBe(16);
  });
});

describe('bounded pages', () => {
  const items = [
    { id: 'a', blob: 'x'.repeat(400) },
    { id: 'b', blob: 'x'.repeat(400) },
    { id: 'c', blob: 'x'.repeat(400) },
  ];
  const tokenOf = (last: { id: string }) => last.id;

  it('ends before the item that would take the page past the bound, with a token there', () => {
    const page = boundedPage(items, false, 256 + 900, tokenOf);
    expect(page.items.map((i) => i.id)).toEqual(['a', 'b']);
    expect(page.next).toBe('b');
    expect(page.json).toEqual(page.items.map((i) => JSON.stringify(i)));
  });

  it('always holds one item, however large; no token at the end', () => {
    expect(boundedPage(items, false, 300, tokenOf)).toMatchObject({ items: [items[0]], next: 'a' });
    expect(boundedPage(items.slice(2), false, 300, tokenOf)).toEqual({
      items: [items[2]],
      json: [JSON.stringify(items[2])],
    });
    expect(boundedPage([], true, 300, tokenOf)).toEqual({ items: [], json: [] });
  });

  it("ends pages where measuring every item's UTF-8 bytes would, for one-, two-, three- and four-byte characters", () => {
    /** The page by the exact measure of each item, as the API's bound is defined. */
    const exactCount = (texts: string[], maxBytes: number) => {
      let total = 0;
      let count = 0;
      for (const text of texts) {
        const bytes = Buffer.byteLength(text) + 1;
        if (count > 0 && total + bytes > maxBytes - 256) break;
        total += bytes;
        count += 1;
      }
      return count;
    };
    const characters = ['x', 'é', '€', '😀', '"'];
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let round = 0; round < 300; round += 1) {
      const texts = Array.from({ length: 1 + random(30) }, () =>
        Array.from({ length: random(120) }, () => characters[random(characters.length)]).join(''),
      );
      const maxBytes = 256 + random(4000);
      const page = boundedPage(
        texts,
        false,
        maxBytes,
        (last) => last,
        (text) => text,
      );
      expect(page.items.length).toBe(exactCount(texts, maxBytes));
    }
    // Every budget from nothing to past three bytes a character: the exact total's edge and the estimate's.
    for (const texts of [
      ['x', 'x'],
      ['€€', '€', '€€€'],
      ['x'.repeat(100), 'é'.repeat(50)],
    ]) {
      const characters = texts.reduce((sum, text) => sum + text.length + 1, 0);
      for (let budget = 0; budget <= 3 * characters + 2; budget += 1) {
        const page = boundedPage(
          texts,
          false,
          256 + budget,
          (last) => last,
          (text) => text,
        );
        expect([budget, page.items.length]).toEqual([budget, exactCount(texts, 256 + budget)]);
      }
    }
  });

  it('loads no more rows than the stored sizes say fit, and at least one', () => {
    expect(rowsToLoad([100, 100, 100], 500, 256 + 2 * 612)).toBe(2);
    expect(rowsToLoad([10_000_000], 500, 4096)).toBe(1);
    expect(rowsToLoad([1, 1, 1, 1], 2, 1 << 20)).toBe(2);
    // A row read whole counts its document's characters, with no overhead added: 3 of 612 fit.
    expect(rowsToLoad([{ whole: 612 }, { whole: 612 }, { whole: 612 }], 500, 256 + 3 * 612)).toBe(
      3,
    );
    expect(rowsToLoad([{ whole: 612 }, 100, { whole: 612 }], 500, 256 + 2 * 612 + 100)).toBe(2);
  });
});
