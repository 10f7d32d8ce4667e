import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import BetterSqlite3 from 'better-sqlite3';

import { type Config, loadConfig } from '../src/config.js';
import { silentLogger } from '../src/core/logging.js';
import { createSteward, type Steward } from '../src/steward.js';
import { benchName, NOOP_KIND, noopModule, noopUrn } from './noop-module.js';

export interface BenchInstance {
  steward: Steward;
  /** http://127.0.0.1:{port}/api/v1beta1 */
  api: string;
  probe: Probe;
  close(): Promise<void>;
}

/**
 * A real Steward with the no-op kind on a temporary SQLite file, listening on a
 * free loopback port; the worker runs only when `worker` is true. Every other
 * setting is the default an operator gets.
 */
export async function startBenchSteward(options: {
  worker: boolean;
  config?: Partial<Config>;
}): Promise<BenchInstance> {
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-'));
  const config = Object.freeze({
    ...loadConfig({}),
    db: join(dir, 'steward.db'),
    fileRoot: join(dir, 'files'),
    port: 0,
    host: '127.0.0.1',
    worker: options.worker,
    workerConcurrency: 8,
    ...options.config,
  });
  const steward = await createSteward(config, {
    extraModules: [{ definition: noopModule, origin: 'bench' }],
    logger: silentLogger,
  });
  const { port } = await steward.start();
  const probe = openProbe(config.db);
  return {
    steward,
    api: `http://127.0.0.1:${port}/api/v1beta1`,
    probe,
    async close() {
      probe.close();
      await steward.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Creates `count` no-op resources in `project` through the core path behind `POST /resources`, one at a time; their URNs. */
export async function createNoopResources(
  steward: Steward,
  project: string,
  count: number,
): Promise<string[]> {
  const urns: string[] = [];
  for (let i = 0; i < count; i += 1) {
    await steward.commands.create(
      { kind: NOOP_KIND, project, name: benchName(i) },
      { actor: 'bench' },
    );
    urns.push(noopUrn(project, benchName(i)));
  }
  return urns;
}

export interface OperationTimes {
  id: string;
  status: string;
  createdMs: number;
  startedMs: number;
  finishedMs: number;
}

/** Cheap reads on a second connection (WAL lets it read while Steward writes). */
export interface Probe {
  /** Resources of `project` still PENDING (served by the status index). */
  pending(project: string): number;
  /** Times of the operations of `project`'s resources. */
  operations(project: string): OperationTimes[];
  close(): void;
}

function openProbe(file: string): Probe {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  // URN ranges keep both reads on an index: (status, urn) and (urn, id).
  const pending = db.prepare<[string, string], { n: number }>(
    "select count(*) as n from resources where status = 'PENDING' and urn >= ? and urn < ?",
  );
  const operations = db.prepare<
    [string, string],
    {
      id: string;
      status: string;
      created_at: string;
      started_at: string | null;
      finished_at: string | null;
    }
  >(
    'select id, status, created_at, started_at, finished_at from operations where urn >= ? and urn < ?',
  );
  const range = (project: string): [string, string] => [
    `orn:steward:noop:${project}:`,
    `orn:steward:noop:${project};`,
  ];
  return {
    pending: (project) => pending.get(...range(project))!.n,
    operations: (project) =>
      operations.all(...range(project)).map((row) => ({
        id: row.id,
        status: row.status,
        createdMs: Date.parse(row.created_at),
        startedMs: row.started_at ? Date.parse(row.started_at) : Number.NaN,
        finishedMs: row.finished_at ? Date.parse(row.finished_at) : Number.NaN,
      })),
    close: () => db.close(),
  };
}
