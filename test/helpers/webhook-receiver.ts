import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';

/** One request the receiver got: the parsed event, its headers, and whether the signature held. */
export interface Received {
  event: { id: number; type: string; urn: string; project: string };
  delivery: string;
  signed: boolean;
  path: string;
  /** The body as it came, bytes and all. */
  body: string;
}

/**
 * A webhook receiver on 127.0.0.1 that checks `Steward-Signature` as docs/webhooks.md tells a
 * receiver to (HMAC-SHA256 of `t.body`, compared in constant time, `t` within 5 minutes of now).
 * `answer` decides each status (200 by default); `close` and `open` take it down and bring it
 * back on the same port. `toleranceS`: Infinity for a Steward on a fake clock.
 */
export async function startReceiver(secret: string, toleranceS = 300) {
  const received: Received[] = [];
  let answer: (path: string) => { status: number; headers?: Record<string, string> } = () => ({
    status: 200,
  });
  let server: Server | undefined;
  let port = 0;

  const verify = (header: string, body: string): boolean => {
    const parts = Object.fromEntries(
      header.split(',').map((part) => part.split('=') as [string, string]),
    );
    const t = Number(parts.t);
    if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceS) return false;
    const expected = createHmac('sha256', secret).update(`${parts.t}.${body}`).digest();
    const given = Buffer.from(parts.v1 ?? '', 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };

  const open = async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        received.push({
          event: JSON.parse(body) as Received['event'],
          delivery: String(req.headers['steward-delivery']),
          signed: verify(String(req.headers['steward-signature'] ?? ''), body),
          path: req.url ?? '',
          body,
        });
        const { status, headers } = answer(req.url ?? '');
        if (status !== 0) res.writeHead(status, headers).end(); // 0: never answer (a hung receiver)
      });
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  };
  await open();

  return {
    received,
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    answerWith(next: typeof answer) {
      answer = next;
    },
    open,
    async close() {
      server?.closeAllConnections();
      await new Promise<void>((resolve) => server?.close(() => resolve()));
      server = undefined;
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
