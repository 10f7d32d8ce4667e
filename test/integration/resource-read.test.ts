import { request } from 'node:http';

import { defineModule } from '../../src/sdk/index.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { createFakeModule } from '../helpers/fake-module.js';
import { type FakeSteward, startFakeSteward, urnOf } from '../helpers/fake-steward.js';
import { call, type Harness, startSteward, waitForStatus } from '../helpers/harness.js';

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

/**
 * The document the database wrote (store/resource-document.ts), sent as it is
 * (core/requests/resource-json.ts) when the view is the stored document (a kind with no writeOnly
 * field, no sealed value), through the view otherwise (the fake
 * kind has a writeOnly password, which must stay redacted): both the characters getResource's view
 * serialises to, and the list page's item.
 */
describeEachDialect('GET /resources/{urn} from the stored text', () => {
  const plain = defineModule({
    kind: 'plain',
    description: 'No writeOnly field: its documents are written from the stored text.',
    configSchema: { type: 'object' },
    actions: { create: {}, update: {}, delete: {} },
    plan: () => ({ data: { pending: ['one'] } }),
    sync: () =>
      Promise.resolve({ status: 'COMPLETED' as const, output: { at: 'é€😀', n: [1.5, null] } }),
  });
  let h: Harness;
  beforeAll(async () => {
    h = await startSteward({
      overrides: { extraModules: [{ definition: plain, origin: 'test' }] },
    });
  });
  afterAll(() => h.close());

  it('is the view getResource builds, character for character, and the list page item', async () => {
    // No `\u` escape in the stored text (that, like a sealed value, takes the view's path).
    const configs = { n: 1, nested: { a: [1, 'b', { c: 'q"b\\s\n' }] }, empty: {} };
    const body = {
      kind: 'plain',
      project: 'p',
      name: 'text-1',
      spec: { configs },
      labels: { a: 'b' },
    };
    expect((await call('POST', `${h.api}/resources`, body)).status).toBe(202);
    const urn = 'orn:steward:plain:p:text-1';
    await waitForStatus(h.api, urn, 'COMPLETED');
    for (const mayChange of [true, undefined]) {
      const { queries } = h.steward;
      const { json } = await queries.getResourceJson(urn, undefined, mayChange);
      expect(json).toBe(JSON.stringify(await queries.getResource(urn, undefined, mayChange)));
    }
    const text = await (await fetch(`${h.api}/resources/${urn}`)).text();
    expect(JSON.parse(text)).toMatchObject({
      spec: { configs },
      state: { output: { at: 'é€😀' } },
    });
    expect(text).toBe(JSON.stringify(await h.steward.queries.getResource(urn, undefined, true)));
    const page = (await (await fetch(`${h.api}/resources?kind=plain`)).json()) as {
      resources: Array<{ urn: string }>;
    };
    expect(JSON.parse(text)).toEqual(page.resources.find((item) => item.urn === urn));
  });

  it('goes through the view for a kind with a writeOnly field: the secret stays redacted', async () => {
    const fake = createFakeModule({});
    const s = await startSteward({
      overrides: { extraModules: [{ definition: fake.definition, origin: 'test' }] },
    });
    try {
      const body = {
        kind: 'fake',
        project: 'p',
        name: 'secret-1',
        spec: { configs: { password: 'hunter2' } },
      };
      expect((await call('POST', `${s.api}/resources`, body)).status).toBe(202);
      const urn = urnOf('secret-1');
      await waitForStatus(s.api, urn, 'COMPLETED');
      const text = await (await fetch(`${s.api}/resources/${urn}`)).text();
      expect(text).not.toContain('hunter2');
      expect(text).toBe(JSON.stringify(await s.steward.queries.getResource(urn, undefined, true)));
    } finally {
      await s.close();
    }
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
