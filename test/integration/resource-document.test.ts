import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';

import type { Store } from '../../src/core/ports.js';
import { createStore } from '../../src/store/create-store.js';
import { RESOURCE_TEXT } from '../../src/store/read-filters.js';
import { resourceDocument } from '../../src/store/resource-document.js';
import { LISTED_COLUMNS, type ListedRow, rowToResource } from '../../src/store/rows.js';
import type { Database } from '../../src/store/schema.js';
import { SQLITE_DOCUMENT } from '../../src/store/sqlite/sqlite-schema.js';
import { describeEachDialect, describeOneDialect } from '../helpers/dialects.js';
import { openRawDatabase, type RawDatabase } from '../helpers/raw-database.js';
import { resourceRow, STORED_ROWS } from '../helpers/resource-rows.js';
import { testDatabase } from '../helpers/test-database.js';

/**
 * The database writes each listed resource's document as JSON (store/resource-document.ts), and
 * the API sends it as it is: it must be the characters of JSON.stringify(rowToResource(row)), the
 * document JavaScript reads from the same row, for every kind of row and every character.
 */

/** The JSON columns, written by JSON.stringify unless a test writes them otherwise. */
const RESOURCE_JSON = [
  'labels',
  'configs',
  'dependencies',
  'policy',
  'output',
  'data',
  'waiting_on',
  'drift',
] as const;
const canonical = (text: string | null) =>
  text === null || text === '' || JSON.stringify(JSON.parse(text)) === text;

/** Characters a stored text may hold: control characters, quotes, backslashes, U+2028, astral. */
const POOL = [
  ...'aZ09 -_.:/"\'\\{}[],',
  '\u0001',
  '\u0008',
  '\t',
  '\n',
  '\u000b',
  '\f',
  '\r',
  '\u001e',
  '\u001f',
  '\u007f',
  '\u0080',
  'é',
  '€',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\uffff',
  '😀',
  '\u{10ffff}',
];

function random(seed: number) {
  let state = seed >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  const int = (below: number) => Math.floor(next() * below);
  const text = (max: number) =>
    Array.from({ length: int(max) }, () => POOL[int(POOL.length)]!).join('');
  const pick = <T>(values: readonly T[]) => values[int(values.length)]!;
  /** An epoch-millisecond time from 1970 to the end of 9999, or near one of its ends. */
  const time = () =>
    pick([
      int(253402300800000),
      int(1000),
      253402300799999 - int(1000),
      Date.parse('2026-11-29T00:00:00.000Z') + int(86400000),
    ]);
  return { next, int, text, pick, time };
}

/** A row of every column at random, as Steward could store it. */
function randomRow(seed: number, index: number): ListedRow {
  const r = random(seed);
  const json = () => JSON.stringify({ [r.text(6)]: r.text(12), n: r.int(1e9), list: [r.text(4)] });
  const nextSyncAt = r.pick([null, r.time()]);
  const status = r.pick(['PENDING', 'COMPLETED', 'ERROR', 'DELETED'] as const);
  return resourceRow({
    urn: `orn:steward:plain:random:r-${index}`,
    project: 'random',
    name: `r-${index}`,
    labels: json(),
    version: 1 + r.int(2 ** 31),
    created_at: new Date(r.time()).toISOString(),
    updated_at: new Date(r.time()).toISOString(),
    created_by: r.text(20),
    updated_by: r.text(20),
    configs: json(),
    dependencies: r.pick(['{}', JSON.stringify({ [r.text(5)]: r.text(30) })]),
    policy: JSON.stringify({ mode: r.pick(['manage', 'observe']), on_delete: 'delete' }),
    status,
    action: r.text(10),
    operation_id: `op_${r.int(1e9)}`,
    output: json(),
    data: r.pick(['null', json(), JSON.stringify(r.text(10))]),
    observed_version: r.pick([null, r.int(2 ** 31)]),
    attempts: r.int(100),
    last_error: r.pick([null, r.text(40)]),
    next_sync_at: nextSyncAt,
    last_synced_at: r.pick([null, new Date(r.time()).toISOString()]),
    waiting_on: r.pick([null, JSON.stringify([r.text(10), r.text(10)])]),
    lease_expires_at: r.pick([null, nextSyncAt, r.time()]),
    deadline_at: r.pick([null, r.time()]),
    paused: r.int(2),
    drift: r.pick([null, JSON.stringify({ checked_at: r.text(5), fields: { a: r.text(3) } })]),
  });
}

/** A stored row written behind Steward's back, its columns as given. */
async function insertRow(raw: RawDatabase, row: ListedRow): Promise<void> {
  await raw.run(
    `insert into resources (${LISTED_COLUMNS.map((c) => `"${c}"`).join(', ')}) values (${LISTED_COLUMNS.map(() => '?').join(', ')})`,
    LISTED_COLUMNS.map((column) => row[column]),
  );
}

describeEachDialect('a resource document written by the database', () => {
  let dir: string;
  let store: Store;
  let raw: RawDatabase;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-document-'));
    const db = await testDatabase(dir);
    raw = await openRawDatabase(db);
    // Times are written in UTC whatever the zone of the database's sessions. (SQLite's `strftime` takes
    // its zone from the C library, read once when the process starts: CI's is UTC, so its case is not made here.)
    if (raw.dialect === 'postgres')
      await raw.run(
        `alter database "${new URL(db).pathname.slice(1)}" set timezone to 'Asia/Kolkata'`,
      );
    store = await createStore({ db, poolSize: 2, busyTimeoutMs: 5000 });
  });
  afterAll(async () => {
    await raw?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const insert = (row: ListedRow) => insertRow(raw, row);

  it.each(STORED_ROWS.map(([name, row], i) => [name, i, row] as const))(
    '%s: the characters of JSON.stringify of the row read in JavaScript',
    async (_, i, stored) => {
      const row = { ...stored, urn: `${stored.urn}-${i}`, name: `${stored.name}-${i}` };
      await insert(row);
      const json = (await store.findResourceItem(row.urn))?.json;
      expect(JSON.parse(json!)).toEqual(rowToResource(row));
      // A stored text JSON.stringify did not write (an escaped `$`) goes in as it is.
      if (RESOURCE_JSON.every((column) => canonical(row[column])))
        expect(json).toBe(JSON.stringify(rowToResource(row)));
      else expect(json).not.toBe(JSON.stringify(rowToResource(row)));
    },
  );

  it('300 random rows: every character, time and null, read by the page and by the URN', async () => {
    const seed = Date.now() % 2 ** 31;
    const rows = Array.from({ length: 300 }, (_, i) => randomRow(seed + i, i));
    if (raw.dialect === 'sqlite') {
      // PostgreSQL text holds no NUL; SQLite does, and a module's error could carry one.
      rows[0]!.last_error = 'nul \u0000 here';
      // A due time with a fraction, as syncs could write before their waits were rounded (bigint refuses one).
      rows[1]!.next_sync_at = 1700000000999.7;
      rows[1]!.lease_expires_at = null;
      rows[2]!.deadline_at = 1700000000999.7;
      rows[2]!.status = 'PENDING';
    }
    for (const row of rows) await insert(row);
    const expected = new Map(rows.map((row) => [row.urn, JSON.stringify(rowToResource(row))]));
    const page = await store.listResourceItems({ project: 'random' }, 1000);
    expect(page.map((item) => item.urn)).toEqual([...expected.keys()].sort());
    for (const item of page)
      expect({ seed, json: item.json }).toEqual({ seed, json: expected.get(item.urn) });
    for (const row of rows.slice(0, 20))
      expect((await store.findResourceItem(row.urn))?.json).toBe(expected.get(row.urn));
  });

  it('leaves out the document of a row whose large columns are longer than the page asks for', async () => {
    const small = resourceRow({ urn: 'orn:steward:plain:inline:small', project: 'inline' });
    const large = resourceRow({
      urn: 'orn:steward:plain:inline:tall',
      project: 'inline',
      configs: JSON.stringify({ blob: 'x'.repeat(5000) }),
    });
    await insert(small);
    await insert(large);
    const [first, second] = await store.listResourceItems(
      { project: 'inline' },
      10,
      undefined,
      1000,
    );
    expect(first).toMatchObject({ urn: small.urn, json: JSON.stringify(rowToResource(small)) });
    expect(second).toMatchObject({ urn: large.urn, json: undefined });
    expect(second!.size).toBeGreaterThan(5000);
    // A row that came whole is measured by its document; one left out by its large columns.
    expect(first!.size).toBe(first!.json!.length);
    expect(second!.size).toBe(
      RESOURCE_TEXT.reduce((n, column) => n + (large[column] ?? '').length, 0),
    );
    const whole = await store.listResourceItems({ project: 'inline' }, 10);
    expect(whole[1]!.json).toBe(JSON.stringify(rowToResource(large)));
    // The bound is inclusive: a row of exactly the inline size comes whole.
    const size = second!.size;
    const [, atBound] = await store.listResourceItems({ project: 'inline' }, 10, undefined, size);
    expect(atBound!.json).toBe(JSON.stringify(rowToResource(large)));
    const [, overBound] = await store.listResourceItems(
      { project: 'inline' },
      10,
      undefined,
      size - 1,
    );
    expect(overBound!.json).toBeUndefined();
  });
});

describeOneDialect('sqlite', 'the SQLite document in another time zone', () => {
  it('writes its times in UTC from a process whose zone is not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steward-document-zone-'));
    const file = await testDatabase(dir);
    const store = await createStore({ db: file, busyTimeoutMs: 5000 });
    const raw = await openRawDatabase(file);
    try {
      const rows = Array.from({ length: 40 }, (_, i) => ({
        ...randomRow((Date.now() % 2 ** 31) + i, i),
        status: 'PENDING',
        next_sync_at: Date.parse('2026-11-29T20:15:00.250Z') + i * 3_600_123,
        lease_expires_at: null,
        deadline_at: Date.parse('2026-12-31T23:30:00.999Z') + i * 60_001,
      }));
      for (const row of rows) await insertRow(raw, row);
      // The statement's document expression as the store compiles it, run by a process in UTC+05:30
      // (the POSIX form needs no zone files): SQLite's strftime takes the zone the C library read at start.
      const compiler = new Kysely<Database>({
        dialect: new SqliteDialect({ database: new BetterSqlite3(':memory:') }),
      });
      const query = compiler
        .selectFrom('resources')
        .select(resourceDocument(SQLITE_DOCUMENT).as('json'))
        .orderBy('urn')
        .compile();
      await compiler.destroy();
      const child = spawnSync(
        process.execPath,
        [
          '-e',
          `const db = new (require('better-sqlite3'))(process.argv[1], { readonly: true });
           const local = db.prepare("select strftime('%H:%M', 0, 'unixepoch', 'localtime')").pluck().get();
           const documents = db.prepare(process.argv[2]).pluck().all(JSON.parse(process.argv[3]));
           console.log(JSON.stringify({ local, documents }));`,
          file,
          query.sql,
          JSON.stringify(query.parameters),
        ],
        { env: { ...process.env, TZ: 'IST-5:30' }, encoding: 'utf8' },
      );
      expect(child.stderr).toBe('');
      const { local, documents } = JSON.parse(child.stdout) as {
        local: string;
        documents: string[];
      };
      expect(local).toBe('05:30'); // the child's zone is not UTC, so the case below can fail
      const expected = [...rows]
        .sort((a, b) => (a.urn < b.urn ? -1 : 1))
        .map((row) => JSON.stringify(rowToResource(row)));
      expect(documents).toEqual(expected);
    } finally {
      await raw.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
