import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';

import { WRITTEN_TABLES as TABLES } from '../../helpers/written-tables.js';

/**
 * Where an injected fault strikes: `events` fails every event insert (the last
 * statement of every write that appends events), `events:{type}` only inserts of
 * that type (`events:operation.started` is the claim's), `operations:insert` the
 * operation insert in the middle of an accepted write, `operations:{status}` an
 * update of an operation to that status (`running`: the claim; `succeeded`: the
 * write-back).
 */
export type FaultPoint =
  'events' | `events:${string}` | 'operations:insert' | `operations:${string}`;

export type Row = Record<string, unknown>;

/**
 * A second connection to Steward's database, from the test: real triggers that
 * make a chosen statement fail inside Steward's transactions (SQLite:
 * RAISE(ABORT); PostgreSQL: RAISE EXCEPTION), switched on and off by rows in a
 * `fault_switch` table, and reads of every table Steward writes.
 */
export interface FaultDb {
  /** Installs the switch table and the triggers (Steward must have migrated the database). */
  install(): Promise<void>;
  on(...points: FaultPoint[]): Promise<void>;
  /** Every fault off. */
  off(): Promise<void>;
  /** Every row of every table Steward writes. */
  snapshot(): Promise<Record<string, Row[]>>;
  resource(urn: string): Promise<Row | undefined>;
  close(): Promise<void>;
}

export function openFaultDb(db: string): FaultDb {
  return /^postgres(ql)?:\/\//.test(db) ? postgresFaultDb(db) : sqliteFaultDb(db);
}

const SELECT_ALL = (table: string, order: string) => `select * from ${table} order by ${order}`;

function sqliteFaultDb(file: string): FaultDb {
  const sqlite = new BetterSqlite3(file, { timeout: 5000 });
  const fail = `begin select raise(abort, 'injected fault'); end`;
  return {
    install: () => {
      sqlite.exec(`
        create table fault_switch (point text primary key);
        create trigger fault_events before insert on events
          when exists (select 1 from fault_switch where point in ('events', 'events:' || new.type)) ${fail};
        create trigger fault_operations_insert before insert on operations
          when exists (select 1 from fault_switch where point = 'operations:insert') ${fail};
        create trigger fault_operations_update before update on operations
          when exists (select 1 from fault_switch where point = 'operations:' || new.status) ${fail};
      `);
      return Promise.resolve();
    },
    on: (...points) => {
      const insert = sqlite.prepare('insert or ignore into fault_switch (point) values (?)');
      for (const point of points) insert.run(point);
      return Promise.resolve();
    },
    off: () => {
      sqlite.exec('delete from fault_switch');
      return Promise.resolve();
    },
    snapshot: () => {
      const read = sqlite.transaction(() =>
        Object.fromEntries(
          Object.entries(TABLES).map(([table, order]) => [
            table,
            sqlite.prepare(SELECT_ALL(table, order)).all() as Row[],
          ]),
        ),
      );
      return Promise.resolve(read());
    },
    resource: (urn) =>
      Promise.resolve(
        sqlite.prepare('select * from resources where urn = ?').get(urn) as Row | undefined,
      ),
    close: () => {
      sqlite.close();
      return Promise.resolve();
    },
  };
}

function postgresFaultDb(url: string): FaultDb {
  const client = new pg.Client({ connectionString: url });
  const connected = client.connect();
  const query = async (text: string, values: unknown[] = []) => {
    await connected;
    return (await client.query(text, values)).rows as Row[];
  };
  return {
    async install() {
      await query(`
        create table fault_switch (point text primary key);
        create function fault_raise() returns trigger language plpgsql as $$
        begin
          if tg_table_name = 'events' then
            if exists (select 1 from fault_switch where point in ('events', 'events:' || new.type)) then raise exception 'injected fault'; end if;
          elsif tg_op = 'INSERT' then
            if exists (select 1 from fault_switch where point = 'operations:insert') then raise exception 'injected fault'; end if;
          elsif exists (select 1 from fault_switch where point = 'operations:' || new.status) then
            raise exception 'injected fault';
          end if;
          return new;
        end $$;
        create trigger fault_events before insert on events for each row execute function fault_raise();
        create trigger fault_operations before insert or update on operations for each row execute function fault_raise();
      `);
    },
    async on(...points) {
      for (const point of points)
        await query('insert into fault_switch (point) values ($1) on conflict do nothing', [point]);
    },
    async off() {
      await query('delete from fault_switch');
    },
    async snapshot() {
      await query('begin isolation level repeatable read');
      try {
        const tables: Record<string, Row[]> = {};
        for (const [table, order] of Object.entries(TABLES))
          tables[table] = await query(SELECT_ALL(table, order));
        return tables;
      } finally {
        await query('commit');
      }
    },
    resource: async (urn) => (await query('select * from resources where urn = $1', [urn]))[0],
    async close() {
      await connected.catch(() => undefined);
      await client.end();
    },
  };
}
