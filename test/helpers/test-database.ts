import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

import pg from 'pg';

import { startPostgres, type TestPostgres } from './postgres.js';

/**
 * The store the suites run against: a SQLite file in the test's directory, or,
 * with STEWARD_TEST_STORE=postgres (the second pass of `npm test`), a fresh
 * database on one throwaway PostgreSQL cluster per test file.
 */
export const TEST_STORE = process.env.STEWARD_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

let cluster: Promise<TestPostgres> | undefined;

export async function testDatabase(dir: string): Promise<string> {
  if (TEST_STORE === 'sqlite') return join(dir, 'steward.db');
  cluster ??= startPostgres();
  const server = await cluster;
  const name = `steward_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  return server.url.replace(/\/postgres$/, `/${name}`);
}

/** Stops this file's cluster (jest calls it after each test file, see test/setup-store.ts). */
export async function stopTestDatabases(): Promise<void> {
  const running = cluster;
  cluster = undefined;
  if (running) await (await running).stop();
}
