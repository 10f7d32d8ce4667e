import express, { type ErrorRequestHandler } from 'express';
import request from 'supertest';

import { installAnswerHooks, whenAnswered } from '../../src/api/answered.js';

/** src/api/answered.ts: the audit's "the answer went out", from hooks on the app's response prototype. */
describe('answer hooks', () => {
  const onError: ErrorRequestHandler = (err: Error, _req, res, _next) => {
    res.status(500).json({ error: err.message });
  };

  it('calls back once per answer, by the time the client has it, and leaves the response without own methods', async () => {
    const app = express();
    installAnswerHooks(app);
    installAnswerHooks(app); // a second install wraps nothing twice
    const calls: string[] = [];
    app.get('/thing/:id', (req, res) => {
      whenAnswered(res, () => calls.push(`${req.params.id} ${res.statusCode}`));
      expect(Object.hasOwn(res, 'writeHead') || Object.hasOwn(res, 'end')).toBe(false);
      res.status(201).json({ ok: true });
    });
    app.get('/silent', (_req, res) => {
      res.end();
    });
    // A stream (a watch, a long list page) sends its head before any end().
    app.get('/stream', (_req, res) => {
      whenAnswered(res, () => calls.push(`stream ${res.statusCode}`));
      res.writeHead(202);
      res.write('x');
      setImmediate(() => {
        calls.push('stream ends');
        res.end('y');
      });
    });
    for (const id of ['a', 'b']) {
      const res = await request(app).get(`/thing/${id}`);
      expect(res.status).toBe(201);
      expect(calls.at(-1)).toBe(`${id} 201`);
    }
    await request(app).get('/silent').expect(200);
    expect((await request(app).get('/stream')).text).toBe('xy');
    expect(calls).toEqual(['a 201', 'b 201', 'stream 202', 'stream ends']);
  });

  it('refuses a response whose app has no hooks, rather than never calling back', async () => {
    const app = express();
    app.get('/thing', (_req, res) => {
      whenAnswered(res, () => undefined);
      res.json({ ok: true });
    });
    app.use(onError);
    const res = await request(app).get('/thing');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: expect.stringContaining('installAnswerHooks') as string });
  });
});
