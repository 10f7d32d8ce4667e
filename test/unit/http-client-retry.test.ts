import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { createApiClient } from '../../src/cli/http-client.js';

/**
 * The CLI's client (src/cli/http-client.ts) against a real HTTP server on 127.0.0.1: every
 * write carries a fresh Idempotency-Key, and a write retried after a dropped connection (or
 * while its first try is still answered) is sent again with the same key.
 */

interface Seen {
  method: string;
  key: string | undefined;
}

let server: Server;
let base: string;
let seen: Seen[];
let answer: (req: IncomingMessage, res: ServerResponse, index: number) => void;

beforeEach(async () => {
  seen = [];
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const key = req.headers['idempotency-key'];
      seen.push({ method: req.method!, key: typeof key === 'string' ? key : undefined });
      answer(req, res, seen.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const ok = (res: ServerResponse, status = 202) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end('{"ok":true}');
const client = () => createApiClient(base, undefined, { retryDelaysMs: [10, 10] });

it('sends a fresh key on each write, and none on a read', async () => {
  answer = (_req, res) => ok(res);
  await client().request('POST', '/resources', { body: { a: 1 } });
  await client().request('PATCH', '/resources/x', { body: { a: 2 } });
  await client().request('GET', '/resources');
  expect(seen.map((s) => s.method)).toEqual(['POST', 'PATCH', 'GET']);
  const [post, patch, get] = seen;
  expect(post!.key).toMatch(/^[0-9a-f-]{36}$/);
  expect(patch!.key).toMatch(/^[0-9a-f-]{36}$/);
  expect(patch!.key).not.toBe(post!.key);
  expect(get!.key).toBeUndefined();
});

it('retries a write whose connection dropped, with the same key', async () => {
  // The first connection ends without an answer, as when Steward dies after its commit.
  answer = (req, res, index) => (index === 0 ? req.socket.destroy() : ok(res));
  expect(await client().request('POST', '/resources', { body: { a: 1 } })).toEqual({ ok: true });
  expect(seen).toHaveLength(2);
  expect(seen[1]!.key).toBe(seen[0]!.key);
});

it('waits while the first try of its key is still answered, then asks again with the key', async () => {
  answer = (_req, res, index) => {
    if (index > 0) return ok(res);
    res
      .writeHead(409, { 'content-type': 'application/json' })
      .end('{"error":{"code":"idempotency_key_in_use","message":"in flight"}}');
  };
  await client().request('DELETE', '/resources/x');
  expect(seen.map((s) => s.key)).toEqual([seen[0]!.key, seen[0]!.key]);
});

it('gives up after its retries, and does not retry a read or another error', async () => {
  answer = (req) => req.socket.destroy();
  await expect(client().request('POST', '/resources', { body: {} })).rejects.toThrow(
    /cannot reach Steward/,
  );
  expect(seen).toHaveLength(3);
  expect(new Set(seen.map((s) => s.key)).size).toBe(1);

  seen = [];
  await expect(client().request('GET', '/resources')).rejects.toThrow(/cannot reach Steward/);
  expect(seen).toHaveLength(1);

  seen = [];
  answer = (_req, res) =>
    res
      .writeHead(409, { 'content-type': 'application/json' })
      .end('{"error":{"code":"already_exists","message":"taken"}}');
  await expect(client().request('POST', '/resources', { body: {} })).rejects.toThrow('taken');
  expect(seen).toHaveLength(1);
});
