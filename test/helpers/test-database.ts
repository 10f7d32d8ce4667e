import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

import pg from 'pg';

import { storeDialect } from './dialects.js';
import { startPostgres, type TestPostgres } from './postgres.js';

let cluster: Promise<TestPostgres> | undefined;
/** The PostgreSQL database of each test directory, so a Steward restarted on a directory finds its data (as in its SQLite file). */
const databases = new Map<string, Promise<string>>();

/**
 * The store of the enclosing dialect block (test/helpers/dialects.ts) for a test directory: a
 * SQLite file in it, or a fresh database on this test file's throwaway PostgreSQL cluster.
 */
export async function testDatabase(dir: string): Promise<string> {
  if (storeDialect() === 'sqlite') return join(dir, 'steward.db');
  let database = databases.get(dir);
  if (!database) {
    database = createDatabase();
    databases.set(dir, database);
  }
  return database;
}

async function createDatabase(): Promise<string> {
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
  databases.clear();
  if (running) await (await running).stop();
}
