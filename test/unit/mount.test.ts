import { once } from 'node:events';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import express, { type ErrorRequestHandler, type RequestHandler } from 'express';

import { chain } from '../../src/api/chain.js';
import { mounted } from '../../src/api/mount.js';

type Seen = Array<{ at: string; url: string; baseUrl: string }>;

/**
 * src/api/mount.ts mounts a handler under a path inside a chain: each request must meet the
 * handler, and the layers after it, with the `req.url` and `req.baseUrl` that `app.use(path,
 * handler)` gives, whatever the handler does next. Both apps serve the same requests over real
 * HTTP (request targets in absolute form too, which a client library would rewrite).
 */
describe('a handler mounted under a path inside a chain', () => {
  const PATH = '/api/v1beta1';
  const servers: Server[] = [];
  afterAll(() => Promise.all(servers.map((s) => new Promise((done) => s.close(done)))));

  const note = (req: express.Request, at: string) => {
    const seen = ((req as { seen?: Seen }).seen ??= []);
    seen.push({ at, url: req.url, baseUrl: req.baseUrl });
  };
  /** Notes what it sees, then does what the `x-then` header says. */
  const inside: RequestHandler = (req, _res, next) => {
    note(req, 'inside');
    const then = req.headers['x-then'];
    if (then === 'error') next(new Error('passed'));
    else if (then === 'throw') throw new Error('thrown');
    else if (then === 'reject') return Promise.reject(new Error('rejected'));
    else if (then === 'route') next('route');
    else if (then === 'router') next('router');
    else next();
    return undefined;
  };
  const answer: RequestHandler = (req, res) => {
    note(req, 'after');
    res.json((req as { seen?: Seen }).seen ?? []);
  };
  const onError: ErrorRequestHandler = (err: Error, req, res, _next) => {
    note(req, `error ${err.message}`);
    res.status(500).json((req as { seen?: Seen }).seen);
  };

  async function serve(mount: (app: express.Express) => void): Promise<number> {
    const app = express();
    mount(app);
    app.use(answer);
    app.use(onError);
    const server = app.listen(0, '127.0.0.1');
    servers.push(server);
    await once(server, 'listening');
    return (server.address() as AddressInfo).port;
  }

  function get(port: number, target: string, then: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, path: target, headers: { 'x-then': then } },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve(`${res.statusCode} ${body}`));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  /** An answer without the chain's next step's notes (a JSON body), else as it came (express's 404 page). */
  function withoutStep(answer: string): string {
    const [status, ...rest] = answer.split(' ');
    const body = rest.join(' ');
    if (!body.startsWith('[')) return answer;
    const seen = (JSON.parse(body) as Seen).filter((s) => s.at !== 'next step');
    return `${status} ${JSON.stringify(seen)}`;
  }

  it('gives the handler and the layers after it what app.use(path, handler) gives', async () => {
    const byExpress = await serve((app) => app.use(PATH, inside));
    const byMount = await serve((app) => app.use(mounted(PATH, inside)));
    // As app.ts has it: a step of a chain, with a step after it.
    const inChain = await serve((app) =>
      app.use(
        chain([mounted(PATH, inside), (req, _res, next) => (note(req, 'next step'), next())]),
      ),
    );
    const targets = [
      '/api/v1beta1/resources',
      '/API/V1Beta1/resources/orn:steward:noop:p:a?x=1',
      '/api/v1beta1',
      '/api/v1beta1/',
      '/api/v1beta1?q=/a',
      '/api/v1beta1//twice',
      '/api/v1beta1#fragment',
      '/%61pi/v1beta1/resources',
      '/api/v1beta1x/resources',
      '/api/v1beta1;x',
      '/api/v1beta',
      '/other/api/v1beta1',
      '/',
      'http://example.test/api/v1beta1/resources?q=1',
      'http://example.test/api/v1beta1',
      'http://example.test/elsewhere',
      'http://example.test?q/api/v1beta1/resources',
    ];
    const endings = ['next', 'error', 'throw', 'reject', 'route', 'router'];
    let compared = 0;
    for (const target of targets)
      for (const then of endings) {
        const expected = await get(byExpress, target, then);
        expect({ target, then, answer: await get(byMount, target, then) }).toEqual({
          target,
          then,
          answer: expected,
        });
        // In a chain the step after sees the request as app.use's next layer would.
        expect({ target, then, answer: withoutStep(await get(inChain, target, then)) }).toEqual({
          target,
          then,
          answer: expected,
        });
        compared += 1;
      }
    expect(compared).toBe(targets.length * endings.length);
    // The comparison sees the handler at all: the first target reached it, with the path cut.
    expect(JSON.parse((await get(byMount, targets[0]!, 'next')).slice(4))).toEqual([
      { at: 'inside', url: '/resources', baseUrl: PATH },
      { at: 'after', url: targets[0], baseUrl: '' },
    ]);
  });

  it('exposes what it mounts where, for the test that walks the served routes', () => {
    const handler = mounted(PATH, inside);
    expect(handler.mount).toEqual({ path: PATH, handler: inside });
  });
});
