import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import pg from 'pg';

import { createStore } from '../../src/store/create-store.js';
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

/**
 * A copy of the cluster's migrated template: `create database … template` copies files, where a
 * new database migrated by each test cost 0.3-0.9 s (create database, then every migration's DDL)
 * hundreds of times a pass. Each Steward still runs migrateToLatest, which finds nothing to do.
 */
async function createDatabase(): Promise<string> {
  cluster ??= startPostgres();
  const server = await cluster;
  template ??= migratedTemplate(server.url);
  const from = await template;
  const name = `steward_${randomBytes(6).toString('hex')}`;
  // One copy at a time: PostgreSQL refuses a copy while another session is connected to the template.
  const copy = copying.then(() =>
    adminQuery(server.url, `create database ${name} template ${from}`),
  );
  copying = copy.catch(() => undefined);
  await copy;
  return databaseUrl(server.url, name);
}

/** What this test file's PostgreSQL cluster has logged so far ('' before it started): its ERRORs, say. */
export async function postgresServerLog(): Promise<string> {
  if (!cluster) return '';
  const { dir } = await cluster;
  const log = join(dir, 'server.log');
  return existsSync(log) ? readFileSync(log, 'utf8') : '';
}

let template: Promise<string> | undefined;
let copying: Promise<unknown> = Promise.resolve();

/** A database migrated to the latest schema by Steward's own store, with no connection left open. */
async function migratedTemplate(url: string): Promise<string> {
  const name = 'steward_template';
  await adminQuery(url, `create database ${name}`);
  const store = await createStore({ db: databaseUrl(url, name), poolSize: 1, busyTimeoutMs: 5000 });
  await store.close();
  return name;
}

async function adminQuery(url: string, statement: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}

function databaseUrl(serverUrl: string, name: string): string {
  return serverUrl.replace(/\/postgres$/, `/${name}`);
}

/** Stops this file's cluster (jest calls it after each test file, see test/setup-store.ts). */
export async function stopTestDatabases(): Promise<void> {
  const running = cluster;
  cluster = undefined;
  template = undefined;
  copying = Promise.resolve();
  databases.clear();
  if (running) await (await running).stop();
}
