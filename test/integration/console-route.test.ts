import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';

import express from 'express';

import { consoleRoutes } from '../../src/api/routes/console.js';
import { securityHeaders } from '../../src/api/security-headers.js';

/**
 * The console's file route on a folder of its own (no build needed): what it
 * serves, how, and what it refuses. test/browser/console-shell.test.ts checks the
 * same over a real Steward with a real build.
 */
describe('console route', () => {
  let dir: string;
  let server: Server;
  let base: string;
  const INDEX = '<!doctype html><title>console</title>';
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-console-route-'));
    const built = join(dir, 'ui');
    mkdirSync(join(built, 'chunks'), { recursive: true });
    writeFileSync(join(built, 'index.html'), INDEX);
    writeFileSync(join(built, 'index.html.br'), brotliCompressSync(INDEX));
    writeFileSync(join(built, 'index.html.gz'), gzipSync(INDEX));
    writeFileSync(join(built, 'main-ABCDEFGH.js'), 'export {};');
    writeFileSync(join(built, 'chunks', 'graph-ABCDEFGH.js'), 'export {};');
    writeFileSync(join(dir, 'secret.js'), 'outside');
    const app = express();
    app.use(securityHeaders);
    app.use(consoleRoutes(built));
    app.use('/missing', consoleRoutes(join(dir, 'nothing-built')));
    await new Promise<void>((resolve) => (server = app.listen(0, '127.0.0.1', () => resolve())));
    const address = server.address() as { port: number };
    base = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('redirects /ui to /ui/ and serves index.html there, never cached, with the console policy', async () => {
    const redirect = await fetch(`${base}/ui?x=1`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('ui/?x=1');
    const res = await fetch(`${base}/ui/`, { headers: { 'accept-encoding': 'identity' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(INDEX);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('sends the precompressed file the client takes: brotli first, then gzip', async () => {
    const encodingOf = async (accept: string) =>
      (await fetch(`${base}/ui/`, { headers: { 'accept-encoding': accept } })).headers.get(
        'content-encoding',
      );
    expect(await encodingOf('gzip, deflate, br')).toBe('br');
    expect(await encodingOf('gzip, br;q=0')).toBe('gzip');
    expect(await encodingOf('identity')).toBeNull();
  });

  it('lets the hashed files cache for good', async () => {
    const res = await fetch(`${base}/ui/chunks/graph-ABCDEFGH.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('answers 404 for a file not built and for any path out of the folder', async () => {
    for (const path of [
      '/ui/nothing.js',
      '/ui/..%2Fsecret.js',
      '/ui/%2e%2e/secret.js',
      '/ui/.hidden.js',
      '/ui/index.html.br',
      '/ui/resources',
    ]) {
      // (fetch itself resolves %2e%2e: that one never reaches the route, and is a 404 all the same.)
      const res = await fetch(`${base}${path}`);
      expect([path, res.status]).toEqual([path, 404]);
      expect(await res.text()).not.toContain('outside');
    }
    const missing = await fetch(`${base}/ui/nothing.js`);
    expect(((await missing.json()) as any).error.code).toBe('not_found');
  });

  it('answers 503 saying how to build when dist/ui is missing', async () => {
    const res = await fetch(`${base}/missing/ui/`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as any;
    expect(body.error.code).toBe('unavailable');
    expect(body.error.message).toContain('npm run build');
  });
});
