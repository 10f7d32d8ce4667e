import { createServer, type Server, type Socket } from 'node:net';

/**
 * A PostgreSQL server that an attacker controls, on 127.0.0.1: it answers an SSLRequest
 * with 'N' (no TLS, so `sslmode=prefer` falls back to plaintext), asks every client for
 * a password — in cleartext (AuthenticationCleartextPassword, 'R' with code 3) or, with
 * `method = 'md5'`, as an md5 hash (code 5) — and records any PasswordMessage it gets,
 * then refuses the login.
 */
export interface FakePostgres {
  port: number;
  /** Connections accepted (an allow-list refusal must leave this at 0). */
  connections: number;
  /** The passwords (or md5 hashes) clients sent, as received. */
  passwords: string[];
  /** How the next connections are asked for the password. @default 'cleartext' */
  method: 'cleartext' | 'md5';
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const PROTOCOL_3 = 196608;

export async function startFakePostgres(): Promise<FakePostgres> {
  const sockets = new Set<Socket>();
  const fake: FakePostgres = {
    port: 0,
    connections: 0,
    passwords: [],
    method: 'cleartext',
    close: () => Promise.resolve(),
  };
  const server: Server = createServer((socket) => {
    fake.connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer = Buffer.alloc(0);
    let started = false;
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (!started) {
          if (buffer.length < 8) return;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) return;
          const code = buffer.readInt32BE(4);
          buffer = buffer.subarray(length);
          if (code === SSL_REQUEST) socket.write('N');
          else if (code === PROTOCOL_3) {
            started = true;
            socket.write(
              fake.method === 'md5'
                ? Buffer.from([0x52, 0, 0, 0, 12, 0, 0, 0, 5, 1, 2, 3, 4]) // 'R', length 12, AuthenticationMD5Password, salt
                : Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3]), // 'R', length 8, AuthenticationCleartextPassword
            );
          } else socket.destroy();
          continue;
        }
        if (buffer.length < 5) return;
        const length = buffer.readInt32BE(1);
        if (buffer.length < 1 + length) return;
        const type = String.fromCharCode(buffer[0]!);
        const body = buffer.subarray(5, 1 + length);
        buffer = buffer.subarray(1 + length);
        if (type === 'p') {
          fake.passwords.push(body.toString('utf8').replace(/\0$/, ''));
          socket.end(errorResponse('28P01', 'password authentication failed'));
          return;
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.port = (server.address() as { port: number }).port;
  fake.close = () =>
    new Promise<void>((resolve) => {
      sockets.forEach((socket) => socket.destroy());
      server.close(() => resolve());
    });
  return fake;
}

function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0C${code}\0M${message}\0\0`, 'utf8');
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(4 + fields.length, 1);
  return Buffer.concat([head, fields]);
}
