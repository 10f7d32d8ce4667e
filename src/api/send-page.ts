import type { Response } from 'express';

import type { EncodedPage } from '../core/requests/bounded-page.js';

/**
 * `{"<key>": [...], "next_page_token": …}` written item by item from the JSON the
 * page was measured with, so the answer is never serialised a second time nor
 * built as one more string the size of the page.
 */
export function sendPage(res: Response, key: string, page: EncodedPage<unknown>): void {
  res.status(200).type('application/json; charset=utf-8');
  res.write(`{${JSON.stringify(key)}:[`);
  page.json.forEach((item, i) => res.write(i === 0 ? item : `,${item}`));
  res.end(`],"next_page_token":${JSON.stringify(page.next ?? null)}}`);
}
