import type { Page } from '../model.js';

/** STEWARD_MAX_PAGE_BYTES when nothing sets it (src/config.ts documents the same default). */
export const DEFAULT_MAX_PAGE_BYTES = 4 * 1024 * 1024;
/** Room left in the bound for the answer around the items: `{"resources":[` … `],"next_page_token":"…"}`. */
const ENVELOPE_BYTES = 256;
/** What a row holds besides its large text columns (names, times, counters, JSON keys), as an estimate. */
const ROW_OVERHEAD_BYTES = 512;

/** A page whose items are also given as JSON, measured once: the API sends these instead of serialising again. */
export interface EncodedPage<T> extends Page<T> {
  json: string[];
}

/**
 * How many rows to load: at most `pageSize`, and no more than fit in `maxBytes` by the
 * sizes the store reported (at least one). A size is characters of stored text, an
 * estimate: a number is a row's large columns, to which ROW_OVERHEAD_BYTES is added for the
 * rest of the row; `{ whole }` is the characters of a row's whole document, already read, with
 * nothing added. `boundedPage` measures the real JSON and may end the page sooner.
 */
export function rowsToLoad(
  sizes: ReadonlyArray<number | { whole: number }>,
  pageSize: number,
  maxBytes: number,
): number {
  const budget = maxBytes - ENVELOPE_BYTES;
  let total = 0;
  let count = 0;
  for (const size of sizes.slice(0, pageSize)) {
    total += typeof size === 'number' ? size + ROW_OVERHEAD_BYTES : size.whole;
    if (count > 0 && total > budget) break;
    count += 1;
  }
  return Math.max(count, 1);
}

/**
 * The most characters of large columns a row of a page of `rows` may have to be read with the
 * rest of its row, in the one statement of a list page: `rows` of them stay within the bound.
 */
export function inlineRowChars(rows: number, maxBytes: number): number {
  return Math.floor((maxBytes - ENVELOPE_BYTES) / rows);
}

/**
 * The items in order while their JSON, with the answer around it, stays within
 * `maxBytes` (always at least one item, however large). `more`: rows exist past
 * `items`; the next token is then where the page ended.
 *
 * UTF-8 takes at most three bytes for a UTF-16 code unit, so while three bytes a character
 * keep the page within the bound, its items are not measured: measuring each item's bytes
 * was 4 % of a list page's CPU, for pages far under the bound (docs/decisions.md,
 * "Per-request costs, second round"). Past that, every item is measured, and the page ends
 * where the exact measure ends it.
 */
export function boundedPage<T>(
  items: readonly T[],
  more: boolean,
  maxBytes: number,
  tokenOf: (last: T) => string,
  jsonOf: (item: T) => string = JSON.stringify,
): EncodedPage<T> {
  const budget = maxBytes - ENVELOPE_BYTES;
  const kept: T[] = [];
  const json: string[] = [];
  /** The bytes so far, or at most this many while `exact` is false. */
  let total = 0;
  let exact = false;
  for (const item of items) {
    const text = jsonOf(item);
    if (!exact && total + 3 * text.length + 1 > budget) {
      exact = true;
      total = json.reduce((sum, kept) => sum + Buffer.byteLength(kept, 'utf8') + 1, 0);
    }
    const bytes = exact ? Buffer.byteLength(text, 'utf8') + 1 : 3 * text.length + 1; // and its comma
    if (kept.length > 0 && total + bytes > budget) break;
    total += bytes;
    kept.push(item);
    json.push(text);
  }
  const cut = kept.length < items.length;
  // No rows at all although the sizes promised some: they were deleted in between; the list ends here.
  return kept.length > 0 && (more || cut)
    ? { items: kept, json, next: tokenOf(kept[kept.length - 1]!) }
    : { items: kept, json };
}
