import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import request from 'supertest';

import { chain } from '../../src/api/chain.js';

/** src/api/chain.ts runs middleware as one express layer: it must pass requests and errors on as separate layers do. */
describe('middleware chained as one layer', () => {
  const mark =
    (name: string): RequestHandler =>
    (_req, res, next) => {
      res.locals.seen = [...((res.locals.seen as string[] | undefined) ?? []), name];
      next();
    };
  const appWith = (handlers: RequestHandler[]) => {
    const app = express();
    app.use('/api', chain(handlers));
    app.get('/api/thing', (_req, res) => {
      res.json({ seen: res.locals.seen as unknown });
    });
    const onError: ErrorRequestHandler = (err: Error, _req, res, _next) => {
      res.status(418).json({ error: err.message, seen: res.locals.seen as unknown });
    };
    app.use(onError);
    return app;
  };

  it('runs each handler in order, then the routes after it', async () => {
    const res = await request(appWith([mark('a'), mark('b'), mark('c')])).get('/api/thing');
    expect(res.body).toEqual({ seen: ['a', 'b', 'c'] });
  });

  it('leaves for the error handler on next(err), a throw or a rejected promise, skipping the rest', async () => {
    const failures: RequestHandler[] = [
      (_req, _res, next) => next(new Error('passed')),
      () => {
        throw new Error('thrown');
      },
      () => Promise.reject(new Error('rejected')),
    ];
    for (const [i, fail] of failures.entries()) {
      const res = await request(appWith([mark('a'), fail, mark('b')])).get('/api/thing');
      expect(res.status).toBe(418);
      expect(res.body).toEqual({ error: ['passed', 'thrown', 'rejected'][i], seen: ['a'] });
    }
  });

  it("goes on past next('route') and a falsy next value, as express does; a falsy rejection is an error", async () => {
    const onward: RequestHandler[] = [
      (_req, _res, next) => next('route'),
      (_req, _res, next) => next(false as unknown as Error),
      (_req, _res, next) => next(''),
    ];
    for (const step of onward) {
      const res = await request(appWith([step, mark('guard')])).get('/api/thing');
      expect(res.body).toEqual({ seen: ['guard'] });
    }
    const falsy = await request(appWith([() => Promise.reject(false), mark('guard')])).get(
      '/api/thing',
    );
    expect(falsy.status).toBe(418);
    expect(falsy.body).toEqual({ error: 'Rejected promise' });
  });

  it('ends with an answer given by a handler, and waits for one that calls next later', async () => {
    const answer: RequestHandler = (_req, res) => {
      res.status(202).json({ answered: true });
    };
    const later: RequestHandler = (_req, res, next) => {
      setTimeout(() => mark('later')(_req, res, next), 5);
    };
    expect((await request(appWith([mark('a'), answer, mark('b')])).get('/api/thing')).body).toEqual(
      {
        answered: true,
      },
    );
    expect((await request(appWith([later, mark('b')])).get('/api/thing')).body).toEqual({
      seen: ['later', 'b'],
    });
  });
});
