import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';

import { type Config, loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/core/logging.js';
import { createLogger } from '../../src/logger.js';
import { createSteward, type Steward, type StewardOverrides } from '../../src/steward.js';
import { storeDialect } from './dialects.js';
import { testDatabase } from './test-database.js';

export interface Harness {
  steward: Steward;
  dir: string;
  /** http://127.0.0.1:{port} */
  url: string;
  /** http://127.0.0.1:{port}/api/v1beta1 */
  api: string;
  /** Every log line, when `captureLogs` was asked for. */
  logs: string[];
  close(): Promise<void>;
}

/** Test settings: fast polls and backoff, a short lease, a temporary SQLite file. */
export function testConfig(dir: string, overrides: Partial<Config> = {}): Readonly<Config> {
  return Object.freeze({
    ...loadConfig({}),
    db: join(dir, 'steward.db'),
    fileRoot: join(dir, 'files'),
    port: 0,
    host: '127.0.0.1',
    pollIntervalMs: 50,
    backoffBaseMs: 5,
    backoffMaxMs: 20,
    leaseMs: 3000,
    dependencyPollMs: 50,
    shutdownGraceMs: 1000,
    ...overrides,
  });
}

/** A real Steward on the enclosing dialect block's store (testDatabase), listening on a free loopback port. */
export async function startSteward(
  options: {
    config?: Partial<Config>;
    overrides?: StewardOverrides;
    captureLogs?: boolean;
    dir?: string;
  } = {},
): Promise<Harness> {
  storeDialect(); // inside a dialect block, even with its own config.db
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'steward-test-'));
  const logs: string[] = [];
  const logger = options.captureLogs
    ? createLogger(
        'debug',
        new Writable({
          write(chunk: Buffer, _encoding, callback) {
            logs.push(chunk.toString());
            callback();
          },
        }),
      )
    : silentLogger;
  const db = options.config?.db ?? (await testDatabase(dir));
  const steward = await createSteward(testConfig(dir, { ...options.config, db }), {
    logger,
    ...options.overrides,
  });
  const { port } = await steward.start();
  const url = `http://127.0.0.1:${port}`;
  return {
    steward,
    dir,
    url,
    api: `${url}/api/v1beta1`,
    logs,
    async close() {
      await steward.stop();
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls until `check` returns a value (not a fixed sleep: returns as soon as it holds). */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** fetch with a JSON body; the answer's body parsed. */
export async function call<T = any>(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const res = await fetch(url, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: the test sees the text
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

/** Waits until the resource reaches `status` (or is gone, for 'GONE'). */
export async function waitForStatus(
  api: string,
  urn: string,
  status: 'COMPLETED' | 'ERROR' | 'PENDING' | 'GONE',
  timeoutMs = 10_000,
) {
  return waitFor(
    async () => {
      const res = await call('GET', `${api}/resources/${urn}`);
      if (status === 'GONE') return res.status === 404 ? res : undefined;
      return res.status === 200 && res.body.state.status === status ? res.body : undefined;
    },
    `${urn} to be ${status}`,
    timeoutMs,
  );
}
