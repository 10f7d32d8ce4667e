import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import type { TLSSocket } from 'node:tls';

import pg from 'pg';

import { TerminalError } from '../../src/sdk/index.js';

/**
 * How the PostgreSQL modules reach a server. Shared by `postgres_server` and
 * `postgres_database` (which connects with what its server dependency publishes).
 */

export type SslMode = 'disable' | 'prefer' | 'require';

/** Where and as whom to connect. */
export interface PostgresTarget {
  host: string;
  port: number;
  user: string;
  password?: string;
  database: string;
  sslmode: SslMode;
}

/** What the modules use of a connected `pg.Client`; a test may hand in its own. */
export interface PostgresSession {
  query(sql: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  end(): Promise<void>;
}

/** Opens one session. Injected into the module factories (tests could substitute it). */
export type PostgresConnect = (target: PostgresTarget) => Promise<PostgresSession>;

const NO_SSL_MESSAGE = 'The server does not support SSL connections';

/**
 * The real connector, over `pg`. `require` encrypts without verifying the certificate
 * (libpq's `require`); `prefer` tries that first and falls back to plaintext when the
 * server has no SSL; `disable` never encrypts.
 */
export const connectPostgres: PostgresConnect = async (target) => {
  const ssl = { rejectUnauthorized: false };
  if (target.sslmode === 'disable') return open(target, false);
  if (target.sslmode === 'require') return open(target, ssl);
  try {
    return await open(target, ssl);
  } catch (err) {
    if ((err as Error).message !== NO_SSL_MESSAGE) throw err;
    return open(target, false);
  }
};

async function open(
  target: PostgresTarget,
  ssl: false | { rejectUnauthorized: boolean },
): Promise<PostgresSession> {
  let cleartextAsked = false;
  const client: pg.Client = new pg.Client({
    host: target.host,
    port: target.port,
    user: target.user,
    // pg asks this function for the password after the server named its method, and sends nothing if it throws.
    // Always a function: given no password, pg would fall back to Steward's own PGPASSWORD and ~/.pgpass.
    password: () => passwordFor(target, client, cleartextAsked),
    database: target.database,
    ssl,
    application_name: 'steward',
    connectionTimeoutMillis: 10_000,
  });
  // Registered before connect(), so it runs before pg's own handler of the same message.
  client.connection.on('authenticationCleartextPassword', () => {
    cleartextAsked = true;
  });
  // A connection dropped while idle is reported on the next query; without a listener it would crash the process.
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/**
 * The resource's own password, unless the server asked for it in cleartext over a
 * connection without TLS: anyone on the path (or a server that is not what it seems)
 * would read it. md5 and SCRAM never put the password itself on the wire, so they are
 * answered either way. Never Steward's own PGPASSWORD or ~/.pgpass.
 */
function passwordFor(target: PostgresTarget, client: pg.Client, cleartextAsked: boolean): string {
  const { stream } = client.connection;
  if (cleartextAsked && (stream as Partial<TLSSocket>).encrypted !== true) {
    stream.destroy();
    throw new TerminalError(
      `postgres ${target.host}:${target.port}: refused to send the password: the server asked for cleartext password authentication on a connection without TLS`,
    );
  }
  if (target.password === undefined) {
    stream.destroy();
    throw new TerminalError(
      `postgres ${target.host}:${target.port}: the server asked for a password, and this resource has none (admin_password)`,
    );
  }
  return target.password;
}

/**
 * Runs `work` on a fresh session and always closes it. Aborting `signal` closes the
 * session, which fails the query in flight. Errors come out classified: `TerminalError`
 * for what retrying cannot fix (refused credentials, missing privileges, unknown
 * extension, objects that still depend on what is dropped), a plain `Error` otherwise.
 */
export async function withSession<T>(
  connect: PostgresConnect,
  target: PostgresTarget,
  signal: AbortSignal | undefined,
  work: (session: PostgresSession) => Promise<T>,
): Promise<T> {
  signal?.throwIfAborted();
  let session: PostgresSession;
  try {
    session = await connect(target);
  } catch (err) {
    throw err instanceof TerminalError ? err : classify(err, target);
  }
  const onAbort = () => void session.end().catch(() => undefined);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await work(session);
  } catch (err) {
    throw err instanceof TerminalError ? err : classify(err, target);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await session.end().catch(() => undefined);
  }
}

/**
 * SQLSTATEs that will not heal by themselves: class 28 (authentication), 3D000 (no such
 * database), 0A000 (feature not supported, e.g. an extension that is not installed),
 * 2BP01 (objects still depend on it), and the access-rule violations of class 42 that
 * are not races (42P04 duplicate database and 42710 duplicate object are: the next try
 * sees the object and converges).
 */
const TERMINAL = /^(28...|3D000|0A000|2BP01|22023|42501|42601|42602|42622|42704|42939)$/;

export function classify(err: unknown, target: Pick<PostgresTarget, 'host' | 'port'>): Error {
  const e = err as { code?: unknown; message?: unknown; detail?: unknown };
  const message = typeof e?.message === 'string' && e.message ? e.message : String(err);
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const where = `postgres ${target.host}:${target.port}`;
  if (code && /^[0-9A-Z]{5}$/.test(code)) {
    const detail = typeof e.detail === 'string' && e.detail ? ` (${e.detail})` : '';
    const text = `${where}: ${message}${detail} [SQLSTATE ${code}]`;
    return TERMINAL.test(code)
      ? new TerminalError(text, { cause: err })
      : new Error(text, { cause: err });
  }
  return new Error(`${where}: ${message}`, { cause: err });
}

/** `"name"`, with embedded quotes doubled. Names are also constrained by the config schemas. */
export function quoteIdentifier(name: string): string {
  return pg.escapeIdentifier(name);
}

/** `'text'`, escaped for a SQL string literal (utility statements take no bind parameters). */
export function quoteLiteral(text: string): string {
  return pg.escapeLiteral(text);
}

/**
 * The SCRAM-SHA-256 verifier PostgreSQL stores for `password` (RFC 7677, as
 * `psql \password` computes it). Sending the verifier instead of the password keeps
 * the plaintext out of the server's statement logs and pg_stat_statements. The
 * password must be ASCII (SASLprep is the identity on it), as generated ones are.
 */
export function scramVerifier(
  password: string,
  salt: Buffer = randomBytes(16),
  iterations = 4096,
): string {
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}
