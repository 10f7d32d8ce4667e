import express, { type ErrorRequestHandler, type RequestHandler, Router } from 'express';
import request from 'supertest';

import { RouteTable, serveRoutes } from '../../src/api/route-table.js';

/**
 * src/api/route-table.ts serves the API's routes as express's Router did: the same requests to an
 * app whose routes are a Router and to one whose routes are a RouteTable get the same answers.
 */
describe('RouteTable', () => {
  type Register = Pick<RouteTable, 'get' | 'post' | 'delete' | 'options'>;
  const answer =
    (name: string): RequestHandler =>
    (req, res) => {
      res.json({ name, params: req.params, route: (req.route as { path: string }).path });
    };
  /** The routes, registered in this order on either kind of table. */
  const register = (routes: Register) => {
    routes.get('/resources', answer('list'));
    routes.get('/resources/:urn', answer('get'));
    routes.post('/resources/:urn/actions/:action', answer('act'));
    routes.get('/resources/:urn/revisions', answer('revisions'));
    // Never reached: the route above it has the same path.
    routes.get('/resources/:other', answer('shadowed'));
    routes.delete('/resources/:urn', async () => {
      await Promise.resolve();
      throw new Error('rejected');
    });
    routes.options('/resources/:urn', () => {
      throw new Error('thrown');
    });
    routes.get('/next', (_req, _res, next) => next());
    routes.get('/next', answer('after next'));
    routes.get('/route', (_req, _res, next) => next('route'));
    routes.get('/route', answer('after route'));
    routes.get('/fails', (_req, _res, next) => next(new Error('passed on')));
    routes.get('/fails', answer('never'));
  };
  const finish = (app: express.Express) => {
    app.use((req, res) => {
      res.status(404).json({
        unmatched: `${req.method} ${req.path}`,
        route: (req.route as { path?: string } | undefined)?.path ?? null,
      });
    });
    const onError: ErrorRequestHandler = (err: Error, _req, res, _next) => {
      res.status(err instanceof URIError ? 400 : 500).json({
        error: err.constructor.name,
        message: err instanceof URIError ? 'bad encoding' : err.message,
      });
    };
    app.use(onError);
    return app;
  };
  const withRouter = () => {
    const router = Router();
    register(router as unknown as Register);
    const app = express();
    app.use('/api', router);
    return finish(app);
  };
  const withTable = () => {
    const table = new RouteTable();
    register(table);
    const app = express();
    app.use('/api', serveRoutes([table]));
    return finish(app);
  };

  const requests: Array<[string, string]> = [
    ['GET', '/api/resources'],
    ['GET', '/api/resources/'],
    ['GET', '/api/RESOURCES'],
    ['GET', '/api/resources?page_size=5'],
    ['GET', '/api/resources/orn:steward:kind:p:n'],
    ['GET', '/api/resources/orn%3Asteward%3Akind%3Ap%3An'],
    ['GET', '/api/resources/a%2Fb'],
    ['GET', '/api/resources/Mixed-Case/'],
    ['GET', '/api/resources//'],
    ['GET', '/api/resources/x/y'],
    ['GET', '/api/resources/x/revisions'],
    ['GET', '/api/resources/%E0%A4%A'],
    ['HEAD', '/api/resources/x'],
    ['POST', '/api/resources/x/actions/retag'],
    ['POST', '/api/resources/x/actions/a%20b'],
    ['POST', '/api/resources/x'],
    ['PUT', '/api/resources/x'],
    ['DELETE', '/api/resources/x'],
    ['OPTIONS', '/api/resources/x'],
    ['GET', '/api/next'],
    ['GET', '/api/route'],
    ['GET', '/api/fails'],
    ['GET', '/elsewhere/resources'],
  ];

  it.each(requests)('%s %s: the answer a Router gives', async (method, path) => {
    const ask = (app: express.Express) =>
      request(app)
        [method.toLowerCase() as 'get'](path)
        .then(({ status, body, headers }) => ({
          status,
          body,
          type: headers['content-type'],
        }));
    expect(await ask(withTable())).toEqual(await ask(withRouter()));
  });

  it('matches the cases that set it apart, so the comparison above is not of two 404s', async () => {
    const app = withTable();
    expect((await request(app).get('/api/resources/a%2Fb')).body).toEqual({
      name: 'get',
      params: { urn: 'a/b' },
      route: '/resources/:urn',
    });
    expect((await request(app).post('/api/resources/x/actions/a%20b')).body.params).toEqual({
      urn: 'x',
      action: 'a b',
    });
    expect((await request(app).get('/api/RESOURCES/')).body.name).toBe('list');
    expect((await request(app).get('/api/resources/%E0%A4%A')).status).toBe(400);
    expect((await request(app).delete('/api/resources/x')).body.message).toBe('rejected');
    expect((await request(app).options('/api/resources/x')).body.message).toBe('thrown');
    expect((await request(app).get('/api/resources//')).status).toBe(404);
    expect((await request(app).head('/api/resources/x')).status).toBe(200);
    expect((await request(app).get('/api/next')).body.name).toBe('after next');
    expect((await request(app).get('/api/route')).body.name).toBe('after route');
    expect((await request(app).get('/api/fails')).body.message).toBe('passed on');
  });

  it('refuses a path with a trailing slash, which a Router would have matched without it', () => {
    expect(() => new RouteTable().get('/resources/', answer('x'))).toThrow(
      /without its trailing slash/,
    );
  });

  it('lists what it serves, in the order registered', () => {
    const table = new RouteTable();
    register(table);
    expect(serveRoutes([table]).routes.slice(0, 3)).toEqual([
      { method: 'GET', path: '/resources' },
      { method: 'GET', path: '/resources/:urn' },
      { method: 'POST', path: '/resources/:urn/actions/:action' },
    ]);
  });
});
