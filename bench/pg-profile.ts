import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';

import pg from 'pg';

import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/core/logging.js';
import { createLogger } from '../src/logger.js';
import { createSteward } from '../src/steward.js';
import { benchName, noopCreateBody, noopModule } from './noop-module.js';
import { post } from './scale-client.js';
import { startScratchPostgres } from './scale-cluster.js';

/**
 * Where the PostgreSQL sync loop spends its time: one in-process worker drains a backlog of
 * no-op resources on a scratch server with pg_stat_statements, then prints reconciles/s, this
 * process's CPU per reconcile, and the statements by server time. For tuning, not a report.
 *
 *   npm run -s build && node dist/bench/pg-profile.js [--resources 5000] [--concurrency 8]
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      resources: { type: 'string', default: '5000' },
      concurrency: { type: 'string', default: '8' },
      quiet: { type: 'boolean', default: false },
      'cpu-profile': { type: 'string' },
    },
  });
  const resources = Number(values.resources);
  const server = await startScratchPostgres(
    process.env.PROFILE_PG_OPTIONS ??
      '-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all -c pg_stat_statements.track_planning=on',
  );
  const admin = new pg.Client({ connectionString: server.url });
  try {
    admin.on('error', () => undefined);
    await admin.connect();
    await admin.query('create database profile');
    const url = server.url.replace(/\/postgres$/, '/profile');
    const probe = new pg.Client({ connectionString: url });
    probe.on('error', () => undefined);
    await probe.connect();
    await probe.query('create extension pg_stat_statements');
    const base = {
      ...loadConfig({}),
      db: url,
      port: 0,
      host: '127.0.0.1',
      workerConcurrency: Number(values.concurrency),
    };
    const api = await createSteward(Object.freeze({ ...base, worker: false }), {
      logger: silentLogger,
      extraModules: [{ definition: noopModule, origin: 'bench' }],
    });
    const { port } = await api.start();
    let next = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < resources) {
          const res = await post(
            `http://127.0.0.1:${port}/api/v1beta1/resources`,
            noopCreateBody('bench', benchName(next++)),
          );
          if (res.status !== 202) throw new Error(`create answered ${res.status}`);
        }
      }),
    );
    await api.stop();
    await probe.query('select pg_stat_statements_reset()');
    // The worker logs as `steward worker` does (one info line per sync), to a sink: --quiet leaves logging out.
    const logger = values.quiet
      ? silentLogger
      : createLogger('info', new Writable({ write: (_chunk, _encoding, done) => done() }));
    const worker = await createSteward(Object.freeze({ ...base, worker: true }), {
      logger,
      extraModules: [{ definition: noopModule, origin: 'bench' }],
      serveApi: false,
    });
    const profiler = values['cpu-profile'] ? await startCpuProfile() : undefined;
    const cpu = process.cpuUsage();
    const started = performance.now();
    await worker.start();
    for (;;) {
      const { rows } = await probe.query<{ n: string }>(
        "select count(*) as n from resources where status <> 'COMPLETED' or lease_owner is not null",
      );
      if (Number(rows[0]!.n) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    if (profiler && values['cpu-profile'])
      writeFileSync(values['cpu-profile'], JSON.stringify((await profiler.stop()) as object));
    await worker.stop();
    const { rows: statements } = await probe.query<{
      calls: string;
      total: number;
      mean: number;
      plan: number;
      query: string;
    }>(
      `select calls, total_exec_time as total, mean_exec_time as mean, mean_plan_time as plan, regexp_replace(query, '\\s+', ' ', 'g') as query
       from pg_stat_statements where query not like '%pg_stat_statements%' and query not like 'select count(*) as n from resources%' order by total_exec_time desc limit 12`,
    );
    const calls = statements.reduce((sum, s) => sum + Number(s.calls), 0);
    const serverMs = statements.reduce((sum, s) => sum + s.total, 0);
    console.log(
      `${resources} reconciles in ${seconds.toFixed(2)} s: ${Math.round(resources / seconds)}/s`,
    );
    console.log(
      `this process: ${((used.user + used.system) / 1000 / resources).toFixed(3)} ms CPU per reconcile (includes the probe)`,
    );
    console.log(
      `server: ${(calls / resources).toFixed(2)} statements and ${(serverMs / resources).toFixed(3)} ms execution per reconcile`,
    );
    for (const s of statements)
      console.log(
        `${String(s.calls).padStart(7)} calls ${s.total.toFixed(0).padStart(6)} ms ${s.mean.toFixed(3)} ms/call (plan ${s.plan.toFixed(3)})  ${s.query.slice(0, 110)}`,
      );
    await probe.end();
  } finally {
    await admin.end().catch(() => undefined);
    await server.stop();
  }
}

/** The V8 profiler over the drain only (not the creates before it), as a .cpuprofile for DevTools. */
async function startCpuProfile(): Promise<{ stop(): Promise<object> }> {
  const session = new Session();
  session.connect();
  const post = (method: string) =>
    new Promise<object>((resolve, reject) =>
      session.post(method, (err, result) => (err ? reject(err) : resolve(result ?? {}))),
    );
  await post('Profiler.enable');
  await post('Profiler.start');
  return { stop: async () => ((await post('Profiler.stop')) as { profile: object }).profile };
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
