import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import pg from 'pg';

import { benchName, noopCreateBody, noopUrn } from './noop-module.js';
import { inParallel, openLoop, type RoundResult } from './pg-peer-load.js';
import { post } from './scale-client.js';
import { migrate, spawnSteward, type StewardProcess } from './scale-cluster.js';
import { sleep } from './stats.js';

/** The `noop` kind as a user module folder, for processes that load modules from STEWARD_MODULE_PATHS. */
const NOOP_MODULE = `// Written by bench/pg-peer-steward.ts: one step that does nothing, so the bench measures Steward.
export default {
  kind: 'noop',
  description: 'Benchmark kind: one step, no side effects.',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  actions: { create: {}, update: {}, delete: {} },
  plan: () => ({ data: { pending: ['noop'] } }),
  sync: () => Promise.resolve({ status: 'COMPLETED' }),
};
`;

/** Writes the module folder under `work` and returns the STEWARD_MODULE_PATHS entry. */
export function writeNoopModule(work: string): string {
  const root = join(work, 'modules');
  mkdirSync(join(root, 'noop'), { recursive: true });
  writeFileSync(join(root, 'noop', 'index.mjs'), NOOP_MODULE);
  return root;
}

/**
 * One Steward round on the empty database `dbUrl`: one `serve --no-worker`; `resources` noop resources
 * created through it with no worker running; then `workers` `steward worker` processes started and timed
 * until every resource is COMPLETED; then, with the same processes, a light load of `ratePerS` creates/s
 * for `seconds` s, each operation's created_at → finished_at read from the operations table.
 */
export async function stewardRound(
  dbUrl: string,
  work: string,
  modulePaths: string,
  o: {
    resources: number;
    workers: number;
    concurrency: number;
    ratePerS: number;
    seconds: number;
    postConcurrency: number;
  },
): Promise<RoundResult & { createMs: number }> {
  const env = {
    STEWARD_DB: dbUrl,
    STEWARD_MODULE_PATHS: modulePaths,
    STEWARD_FILE_ROOT: join(work, 'files'),
    STEWARD_RUN_DIR: join(work, 'run'),
    STEWARD_WORKER_CONCURRENCY: String(o.concurrency),
  };
  await migrate(env);
  const fleet: StewardProcess[] = [];
  const probe = new pg.Client({ connectionString: dbUrl });
  await probe.connect();
  try {
    const api = await spawnSteward('serve --no-worker', env);
    fleet.push(api);
    const base = `${api.url}/api/v1beta1/resources`;
    const create = async (project: string, name: string) => {
      for (;;) {
        const res = await post(base, noopCreateBody(project, name));
        if (res.status === 202) return;
        if (res.status !== 503 && res.status !== 0)
          throw new Error(
            `POST ${project}/${name} answered ${res.status}: ${JSON.stringify(res.body)}`,
          );
        await sleep(100);
      }
    };
    const createT0 = Date.now();
    await inParallel(
      Array.from({ length: o.resources }, (_, i) => benchName(i)),
      o.postConcurrency,
      (name) => create('tput', name),
    );
    const createMs = Date.now() - createT0;

    const spawnedMs = Date.now();
    fleet.push(
      ...(await Promise.all(Array.from({ length: o.workers }, () => spawnSteward('worker', env)))),
    );
    const readyMs = Date.now();
    const completed = async (project: string) =>
      Number(
        (
          await probe.query<{ n: string }>(
            "select count(*) as n from resources where status = 'COMPLETED' and project = $1",
            [project],
          )
        ).rows[0]!.n,
      );
    while ((await completed('tput')) < o.resources) await sleep(20);
    const drainedMs = Date.now();
    const span = (
      await probe.query<{ first: string; last: string }>(
        "select min(started_at) as first, max(finished_at) as last from operations where urn like 'orn:steward:noop:tput:%'",
      )
    ).rows[0]!;

    const sentAt = new Map<string, number>();
    const load = await openLoop(o.ratePerS, o.seconds, (i) => {
      const name = benchName(i);
      sentAt.set(noopUrn('lat', name), Date.now());
      return create('lat', name);
    });
    while ((await completed('lat')) < load.sent) await sleep(20);
    const ops = await probe.query<{ urn: string; created_at: string; finished_at: string }>(
      "select urn, created_at, finished_at from operations where urn like 'orn:steward:noop:lat:%' and status = 'succeeded'",
    );
    if (ops.rows.length !== load.sent)
      throw new Error(
        `expected ${load.sent} succeeded operations of the light load, found ${ops.rows.length}`,
      );
    return {
      items: o.resources,
      createMs,
      workMs: Date.parse(span.last) - Date.parse(span.first),
      wallMs: drainedMs - spawnedMs,
      startupMs: readyMs - spawnedMs,
      perProcess: [],
      latencyMs: ops.rows.map((r) => Date.parse(r.finished_at) - Date.parse(r.created_at)),
      clientLatencyMs: ops.rows.map((r) => Date.parse(r.finished_at) - sentAt.get(r.urn)!),
      loadSent: load.sent,
      loadLagMs: load.maxLagMs,
    };
  } finally {
    await Promise.all(fleet.map((p) => stopSteward(p)));
    await probe.end().catch(() => undefined);
  }
}

/** SIGTERM, then SIGKILL after 15 s. */
async function stopSteward(p: StewardProcess): Promise<void> {
  if (p.proc.exitCode !== null || p.proc.signalCode !== null) return;
  p.proc.kill('SIGTERM');
  const timer = setTimeout(() => p.proc.kill('SIGKILL'), 15_000);
  await p.exited;
  clearTimeout(timer);
}
