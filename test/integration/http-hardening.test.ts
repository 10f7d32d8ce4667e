import { connect, type Socket } from 'node:net';

import { describeEachDialect } from '../helpers/dialects.js';
import { expectError, type FakeSteward, startFakeSteward, urnOf } from '../helpers/fake-steward.js';
import { call } from '../helpers/harness.js';

/**
 * Denial of service at the HTTP layer (issue 11), each attack as it was reproduced,
 * over real sockets on 127.0.0.1: idle connections that would take every file
 * descriptor, list pages of tens of MiB, bodies nested a million deep, a label filter
 * of a thousand pairs, a malformed If-Match and an HTTP/0.9 request line.
 */

/** A raw TCP exchange: sends `text` (or nothing), resolves with what came back once the server closes the socket. */
function exchange(port: number, text?: string): { socket: Socket; closed: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  const closed = new Promise<string>((resolve) => {
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined); // a reset is a close too
    socket.on('close', () => resolve(received));
  });
  if (text !== undefined) socket.write(text);
  return { socket, closed };
}

const portOf = (s: FakeSteward) => Number(new URL(s.h.url).port);
const bodyOf = (answer: string) =>
  JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as {
    error: { code: string; message: string };
  };

describeEachDialect('idle and slow connections', () => {
  const CAP = 5;
  let s: FakeSteward;
  let open = 0;
  let mostOpen = 0;
  beforeAll(async () => {
    s = await startFakeSteward({ config: { headersTimeoutMs: 300, maxConnections: CAP } });
    s.h.steward.server!.on('connection', (socket: Socket) => {
      open += 1;
      mostOpen = Math.max(mostOpen, open);
      socket.once('close', () => (open -= 1));
    });
  });
  afterAll(() => s.close());

  it('more idle sockets than the cap: the server never holds more than the cap, closes them after the timeout, then serves again', async () => {
    const port = portOf(s);
    const sockets = Array.from({ length: CAP * 3 }, () => exchange(port));
    const answers = await Promise.all(sockets.map((x) => x.closed));
    // Those held got the 400 of a request that never came; the ones past the cap were closed unanswered at once.
    const timedOut = answers.filter((a) => a.startsWith('HTTP/1.1 400 '));
    expect(timedOut.length).toBeGreaterThan(0);
    for (const answer of timedOut)
      expect(bodyOf(answer).error).toEqual({
        code: 'invalid_request',
        message: 'the request did not arrive in time',
      });
    expect(answers.filter((a) => a === '').length + timedOut.length).toBe(answers.length);
    expect(mostOpen).toBeLessThanOrEqual(CAP);
    expect((await call('GET', `${s.h.url}/healthz`)).status).toBe(200);
  });

  it('idle sockets are closed while requests are served on other connections meanwhile', async () => {
    const port = portOf(s);
    const idle = Array.from({ length: 3 }, () => exchange(port));
    await new Promise<void>((resolve) => idle[2]!.socket.once('connect', () => resolve()));
    expect((await call('GET', `${s.h.url}/healthz`)).status).toBe(200);
    for (const answer of await Promise.all(idle.map((x) => x.closed))) {
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(bodyOf(answer).error.message).toBe('the request did not arrive in time');
    }
  });

  it('a request head sent in part and never finished (slowloris) is answered 400 and closed', async () => {
    const answer = await exchange(portOf(s), 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n')
      .closed;
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(answer).error.message).toBe('the request did not arrive in time');
  });

  it('a keep-alive connection that goes quiet after its answer is closed', async () => {
    const answer = await exchange(portOf(s), 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n').closed;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('an HTTP/0.9 request line without the blank line is closed at the timeout, with no crash', async () => {
    const answer = await exchange(portOf(s), 'GET /\r\n').closed;
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect((await call('GET', `${s.h.url}/healthz`)).status).toBe(200);
  });
});

describeEachDialect('request heads, bodies and filters', () => {
  let s: FakeSteward;
  const existing = urnOf('existing');
  beforeAll(async () => {
    s = await startFakeSteward();
    expect((await s.create('existing', { value: 0 }, { labels: { team: 'a' } })).status).toBe(202);
    await s.drain();
  });
  afterAll(() => s.close());

  const resourceRows = async () =>
    (await call('GET', `${s.api}/resources/${existing}`)).body as unknown;

  it.each([
    'GET /\r\n\r\n',
    'GET / HTTP/0.9\r\n\r\n',
    'GET /api/v1beta1/resources HTTP/2.0\r\nHost: x\r\n\r\n',
  ])('a request line of another HTTP version (%j) is refused with 400 and closed', async (line) => {
    const answer = await exchange(portOf(s), line).closed;
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer).toMatch(/\r\nConnection: close\r\n/);
    expect(bodyOf(answer).error).toEqual({
      code: 'invalid_request',
      message: expect.stringMatching(/^HTTP\/(0\.9|2\.0) is not supported; send HTTP\/1\.1$/),
    });
    expect((await call('GET', `${s.h.url}/healthz`)).status).toBe(200);
  });

  const deepUnclosed = '['.repeat(1024 * 1024 - 1);
  const deepBalanced = '['.repeat(512 * 1024) + ']'.repeat(512 * 1024 - 1);

  it.each([
    ['POST', '/resources', deepUnclosed],
    ['POST', '/resources', deepBalanced],
    ['PATCH', `/resources/${existing}`, deepBalanced],
    ['POST', `/resources/${existing}/actions/bump`, `{"by":${'['.repeat(101)}1${']'.repeat(101)}}`],
  ])(
    '%s %s with a body nested a million deep → 400 naming the depth limit, nothing changed',
    async (method, path, body) => {
      const before = await resourceRows();
      const res = await call(method, `${s.api}${path}`, body);
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details).toEqual({ limit: 'body_depth', max: 100 });
      expect(res.body.error.message).toBe('the request body is nested deeper than 100 levels');
      expect(await resourceRows()).toEqual(before);
    },
  );

  it('100 levels are accepted and 101 refused; brackets inside strings do not count', async () => {
    // The body, spec and configs are 3 levels: a value of n arrays reaches 3 + n.
    const create = (n: number) =>
      call(
        'POST',
        `${s.api}/resources?dry_run=true`,
        `{"kind":"fake","project":"p","name":"deep","spec":{"configs":{"value":${'['.repeat(n)}"a\\"[[[{{"${']'.repeat(n)}}}}`,
      );
    expect((await create(97)).status).toBe(200);
    const refused = await create(98);
    expectError(refused, 400, 'invalid_request');
    expect(refused.body.error.details).toEqual({ limit: 'body_depth', max: 100 });
  });

  it('a GET or DELETE never reads its body: 1 MiB of `[` or garbage is ignored and the request is answered as without it', async () => {
    const port = portOf(s);
    for (const [method, path, status] of [
      ['GET', '/api/v1beta1/resources', 200],
      ['GET', `/api/v1beta1/resources/${existing}`, 200],
      ['DELETE', `/api/v1beta1/resources/${urnOf('ghost')}`, 404],
    ] as const) {
      for (const body of [deepUnclosed, 'not json at all {{{']) {
        const head = `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
        const answer = await exchange(port, head + body).closed;
        expect(answer.slice(0, 12)).toBe(`HTTP/1.1 ${status}`);
      }
    }
  });

  it('a labels filter of 1,000 pairs → 400 naming STEWARD_MAX_LABELS; 64 pairs are answered', async () => {
    const pairs = (n: number) => Array.from({ length: n }, (_, i) => `k${i}=v`).join(',');
    const res = await call('GET', `${s.api}/resources?labels=${pairs(1000)}`);
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.details).toEqual({ limit: 'STEWARD_MAX_LABELS', max: 64 });
    expect(res.body.error.message).toBe(
      'labels names 1000 pairs, more than the 64 allowed (STEWARD_MAX_LABELS)',
    );
    const atLimit = await call('GET', `${s.api}/resources?labels=team=a,${pairs(63)}`);
    expect(atLimit.status).toBe(200);
    expect(atLimit.body.resources).toEqual([]);
    expect(
      (await call('GET', `${s.api}/resources?labels=team=a`)).body.resources.map(
        (r: { urn: string }) => r.urn,
      ),
    ).toEqual([existing]);
  });

  it.each(['"abc"', 'garbage', '"1", "2"', '-1', 'W/"x"', '"99999999999999999"'])(
    'If-Match %s → 400, nothing changed',
    async (ifMatch) => {
      const before = await resourceRows();
      for (const [method, body] of [
        ['PATCH', { configs: { value: 9 } }],
        ['DELETE', undefined],
      ] as const) {
        const res = await call(method, `${s.api}/resources/${existing}`, body, {
          'if-match': ifMatch,
        });
        expectError(res, 400, 'invalid_request');
        expect(res.body.error.message).toBe(
          'If-Match must be a version as the ETag gives it ("3", W/"3" or 3), or *',
        );
      }
      expect(await resourceRows()).toEqual(before);
    },
  );
});

describeEachDialect('list pages bounded by bytes', () => {
  const MAX_PAGE_BYTES = 64 * 1024;
  let s: FakeSteward;
  const sizes = Array.from({ length: 40 }, (_, i) => 1024 + ((i * 7919) % 20) * 1024); // 1 to 20 KiB, shuffled
  beforeAll(async () => {
    s = await startFakeSteward({ config: { maxPageBytes: MAX_PAGE_BYTES } });
    for (const [i, size] of sizes.entries())
      expect(
        (await s.create(`r${String(i).padStart(2, '0')}`, { value: 'x'.repeat(size) })).status,
      ).toBe(202);
    expect((await s.create('huge', { value: 'y'.repeat(100 * 1024) })).status).toBe(202);
    await s.drain();
  });
  afterAll(() => s.close());

  /** Every page of a listing: its raw size and its items. */
  async function walk(path: string, key: string): Promise<Array<{ bytes: number; items: any[] }>> {
    const pages: Array<{ bytes: number; items: any[] }> = [];
    let token: string | null = null;
    for (let i = 0; i < 200; i += 1) {
      const res = await fetch(
        `${s.api}${path}${path.includes('?') ? '&' : '?'}page_size=500${token ? `&page_token=${token}` : ''}`,
      );
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const text = await res.text();
      const body = JSON.parse(text) as Record<string, any>;
      pages.push({ bytes: Buffer.byteLength(text), items: body[key] });
      token = body.next_page_token;
      if (token === null) return pages;
    }
    throw new Error('the listing did not end');
  }

  it('GET /resources: no page is over the bound (but for one item larger than it), and the tokens walk every resource exactly once', async () => {
    const pages = await walk('/resources', 'resources');
    expect(pages.length).toBeGreaterThan(5);
    for (const page of pages) {
      expect(page.items.length).toBeGreaterThan(0);
      if (page.items.length > 1) expect(page.bytes).toBeLessThanOrEqual(MAX_PAGE_BYTES);
    }
    const huge = pages.find((page) => page.items.some((r) => r.name === 'huge'))!;
    expect(huge.items).toHaveLength(1);
    const urns = pages.flatMap((page) => page.items.map((r) => r.urn as string));
    const expected = [
      ...sizes.map((_, i) => urnOf(`r${String(i).padStart(2, '0')}`)),
      urnOf('huge'),
    ].sort();
    expect(urns).toEqual(expected);
  });

  it('GET /resources/{urn}/revisions and GET /operations are bounded the same way', async () => {
    const urn = urnOf('r00');
    for (let i = 0; i < 6; i += 1) {
      expect(
        (
          await call('PATCH', `${s.api}/resources/${urn}`, {
            configs: { value: `${i}`.repeat(30 * 1024) },
          })
        ).status,
      ).toBe(202);
      await s.drain();
    }
    const revisions = await walk(`/resources/${urn}/revisions`, 'revisions');
    for (const page of revisions)
      if (page.items.length > 1) expect(page.bytes).toBeLessThanOrEqual(MAX_PAGE_BYTES);
    expect(revisions.length).toBeGreaterThan(1);
    expect(revisions.flatMap((page) => page.items.map((r) => r.version as number))).toEqual([
      7, 6, 5, 4, 3, 2, 1,
    ]);
    const operations = await walk('/operations', 'operations');
    const ids = operations.flatMap((page) => page.items.map((o) => o.id as string));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(sizes.length + 1 + 6);
  });
});
