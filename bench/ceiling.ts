import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import BetterSqlite3 from 'better-sqlite3';

import { createStore } from '../src/store/create-store.js';
import { benchName, NOOP_KIND, noopUrn } from './noop-module.js';

export interface CeilingResult {
  rows: number;
  batch: number;
  elapsedMs: number;
  rowsPerS: number;
}

/**
 * The floor under Steward's sync loop: the same claim / write-back statements
 * (those of src/store/sqlite/sqlite-claim.ts and write-back.ts for a one-step create that completes; the
 * claim in one UPDATE … RETURNING where Steward first SELECTs the due rows for a
 * metric), prepared once and run synchronously on better-sqlite3, with no kysely,
 * no module call and no JavaScript between them. Same schema (Steward's
 * migrations), same pragmas (WAL, synchronous=NORMAL), same batch size as the
 * worker's concurrency.
 */
export async function measureCeiling(total: number, batch: number): Promise<CeilingResult> {
  const dir = mkdtempSync(join(tmpdir(), 'steward-ceiling-'));
  const file = join(dir, 'steward.db');
  try {
    await (await createStore({ db: file, busyTimeoutMs: 5000 })).close();
    const db = new BetterSqlite3(file);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      insertDueRows(db, total);
      const started = process.hrtime.bigint();
      const cycle = createCycle(db, batch);
      let done = 0;
      for (;;) {
        const claimed = cycle.claim();
        if (claimed.length === 0) break;
        cycle.writeBack(claimed);
        done += claimed.length;
      }
      const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
      const left = db
        .prepare("select count(*) as n from resources where status = 'PENDING'")
        .get() as { n: number };
      if (done !== total || left.n !== 0)
        throw new Error(`ceiling completed ${done} of ${total} rows`);
      return { rows: total, batch, elapsedMs, rowsPerS: total / (elapsedMs / 1000) };
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The rows a create leaves: a PENDING resource due now and its queued operation. */
function insertDueRows(db: BetterSqlite3.Database, total: number): void {
  const nowIso = new Date().toISOString();
  const resource = db.prepare(
    `insert into resources (urn, kind, project, name, labels, version, created_at, updated_at, created_by, updated_by, configs, dependencies,
       status, action, operation_id, output, data, observed_version, attempts, last_error, next_sync_at, last_synced_at, waiting_on,
       lease_owner, lease_expires_at, lease_token)
     values (?, ?, 'ceiling', ?, '{}', 1, ?, ?, 'bench', 'bench', '{}', '{}', 'PENDING', 'create', ?, '{}', '{"pending":["noop"]}', null, 0, null, ?, null, null, null, null, 0)`,
  );
  const operation = db.prepare(
    `insert into operations (id, urn, action, params, status, version, attempts, error, created_at, started_at, finished_at, created_by)
     values (?, ?, 'create', '{}', 'queued', 1, 0, null, ?, null, null, 'bench')`,
  );
  const nowMs = Date.now();
  db.transaction(() => {
    for (let i = 0; i < total; i += 1) {
      const name = benchName(i);
      const urn = noopUrn('ceiling', name);
      const opId = `op_ceiling_${name}`;
      // Due in creation order, all already due.
      resource.run(urn, NOOP_KIND, name, nowIso, nowIso, opId, nowMs - total + i);
      operation.run(opId, urn, nowIso);
    }
  })();
}

interface ClaimedRow {
  urn: string;
  kind: string;
  project: string;
  operation_id: string;
  action: string;
  version: number;
  lease_token: number;
}

function createCycle(db: BetterSqlite3.Database, batch: number) {
  const owner = 'w_ceiling';
  const leaseMs = 15_000;
  const claimRows = db.prepare<[string, number, number, number, number, number], ClaimedRow>(
    `update resources set lease_owner = ?, lease_expires_at = ?, next_sync_at = ?, lease_token = lease_token + 1
     where urn in (select urn from resources where next_sync_at <= ? and (lease_expires_at is null or lease_expires_at <= ?) order by next_sync_at limit ?)
     returning *`,
  );
  const startOperations = cachedBySize((n) =>
    db.prepare(
      `update operations set status = 'running', started_at = ? where id in (${marks(n)}) and status = 'queued' returning id`,
    ),
  );
  const insertEvents = cachedBySize((n) =>
    db.prepare(
      `insert into events (type, urn, kind, project, operation_id, data, created_at) values ${Array(n).fill('(?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
    ),
  );
  const completeResource = db.prepare(
    `update resources set status = ?, attempts = ?, last_error = ?, next_sync_at = ?, waiting_on = ?, lease_owner = null, lease_expires_at = null,
       last_synced_at = ?, observed_version = ?
     where urn = ? and lease_token = ? and operation_id = ? and status = 'PENDING'`,
  );
  const finishOperation = db.prepare(
    'update operations set attempts = attempts + 1, status = ?, error = ?, finished_at = ? where id = ?',
  );
  const wakeDependents = db.prepare(
    `update resources set next_sync_at = ? where waiting_on is not null and (lease_expires_at is null or lease_expires_at <= ?)
     and urn in (select urn from resource_dependencies where depends_on = ?)`,
  );

  const claim = db
    .transaction((nowMs: number): ClaimedRow[] => {
      const until = nowMs + leaseMs;
      const rows = claimRows.all(owner, until, until, nowMs, nowMs, batch);
      if (rows.length === 0) return rows;
      const nowIso = new Date(nowMs).toISOString();
      const started = new Set(
        startOperations(rows.length)
          .all(nowIso, ...rows.map((row) => row.operation_id))
          .map((op) => (op as { id: string }).id),
      );
      const events = rows
        .filter((row) => started.has(row.operation_id))
        .flatMap((row) => [
          'operation.started',
          row.urn,
          row.kind,
          row.project,
          row.operation_id,
          JSON.stringify({ action: row.action }),
          nowIso,
        ]);
      if (events.length) insertEvents(events.length / 7).run(...events);
      return rows;
    })
    .immediate.bind(null);

  const writeBack = db
    .transaction((rows: ClaimedRow[], nowMs: number): void => {
      const nowIso = new Date(nowMs).toISOString();
      const events: unknown[] = [];
      for (const row of rows) {
        const result = completeResource.run(
          'COMPLETED',
          0,
          null,
          null,
          null,
          nowIso,
          row.version,
          row.urn,
          row.lease_token,
          row.operation_id,
        );
        if (result.changes !== 1) throw new Error(`ceiling lost the lease of ${row.urn}`);
        finishOperation.run('succeeded', null, nowIso, row.operation_id);
        wakeDependents.run(nowMs, nowMs, row.urn);
        events.push(
          'resource.status_changed',
          row.urn,
          row.kind,
          row.project,
          row.operation_id,
          JSON.stringify({ from: 'PENDING', to: 'COMPLETED', action: row.action }),
          nowIso,
          'operation.succeeded',
          row.urn,
          row.kind,
          row.project,
          row.operation_id,
          JSON.stringify({ action: row.action }),
          nowIso,
        );
      }
      insertEvents(events.length / 7).run(...events);
    })
    .immediate.bind(null);

  return {
    claim: () => claim(Date.now()),
    writeBack: (rows: ClaimedRow[]) => writeBack(rows, Date.now()),
  };
}

function marks(n: number): string {
  return Array(n).fill('?').join(', ');
}

function cachedBySize(
  prepare: (n: number) => BetterSqlite3.Statement,
): (n: number) => BetterSqlite3.Statement {
  const cache = new Map<number, BetterSqlite3.Statement>();
  return (n) => {
    let statement = cache.get(n);
    if (!statement) {
      statement = prepare(n);
      cache.set(n, statement);
    }
    return statement;
  };
}
