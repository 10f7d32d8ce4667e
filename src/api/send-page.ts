import type { Response } from 'express';

import type { EncodedPage } from '../core/requests/bounded-page.js';

/** Items are written in runs of about this many characters (up to three times as many bytes in UTF-8): one write per item cost a list page of 50 a tenth of its CPU in socket writes. */
const WRITE_CHARS = 64 * 1024;

/**
 * `{"<key>": [...], "next_page_token": …}` written from the JSON the page was measured
 * with, so the answer is never serialised a second time nor built as one more string
 * the size of the page: items go out in runs of about 64 KiB (a page of small items
 * in a single write, with its Content-Length). Each run is encoded once, here: a string would be
 * measured for its Content-Length (or chunk size) and then encoded again for the socket, and the
 * measuring was 4 % of a list page's CPU (docs/decisions.md, "Per-request costs, second round").
 */
export function sendPage(res: Response, key: string, page: EncodedPage<unknown>): void {
  res.status(200).type('application/json; charset=utf-8');
  let run = `{${JSON.stringify(key)}:[`;
  page.json.forEach((item, i) => {
    run += i === 0 ? item : `,${item}`;
    if (run.length >= WRITE_CHARS) {
      res.write(Buffer.from(run));
      run = '';
    }
  });
  res.end(Buffer.from(`${run}],"next_page_token":${JSON.stringify(page.next ?? null)}}`));
}
