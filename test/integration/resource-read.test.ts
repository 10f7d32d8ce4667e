import { request } from 'node:http';

import { describeEachDialect } from '../helpers/dialects.js';
import { type FakeSteward, startFakeSteward, urnOf } from '../helpers/fake-steward.js';

/**
 * GET /resources/{urn} writes its JSON itself (src/api/send-json.ts), not through express's
 * res.json: the answer must stay what res.json gave, headers, HEAD and conditional requests included.
 */
describeEachDialect('GET /resources/{urn} answer', () => {
  let s: FakeSteward;
  let url: string;
  beforeAll(async () => {
    s = await startFakeSteward();
    // Characters of two, three and four bytes in UTF-8: the length is in bytes.
    expect((await s.create('read-1', {}, { labels: { team: 'é€😀' } })).status).toBe(202);
    await s.drain();
    url = `${s.api}/resources/${urnOf('read-1')}`;
  });
  afterAll(() => s.close());

  it('is the document as JSON, with its type, its length in bytes and its version as ETag', async () => {
    const res = await fetch(url);
    expect(res.status).toBe(200);
    const text = await res.text();
    const body = JSON.parse(text) as { labels: Record<string, string>; version: number };
    expect(body.labels).toEqual({ team: 'é€😀' });
    expect(text).toBe(JSON.stringify(body));
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(res.headers.get('etag')).toBe(`"${body.version}"`);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('answers a HEAD with the same headers and no body', async () => {
    const get = await fetch(url);
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    for (const name of ['content-type', 'content-length', 'etag'])
      expect(head.headers.get(name)).toBe(get.headers.get(name));
  });

  it('answers 304 to If-None-Match of its ETag, and the document to another', async () => {
    const etag = (await fetch(url)).headers.get('etag')!;
    const same = await conditionalGet(url, etag);
    expect(same.status).toBe(304);
    expect(same.body).toBe('');
    const other = await conditionalGet(url, '"999"');
    expect(other.status).toBe(200);
    expect((JSON.parse(other.body) as { urn: string }).urn).toBe(urnOf('read-1'));
  });
});

/** With node's http: fetch adds `Cache-Control: no-cache` to a conditional request, which no server answers 304. */
function conditionalGet(url: string, etag: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { 'if-none-match': etag } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
