import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { makeWorkerUtils } from 'graphile-worker';
import pg from 'pg';

import { openLoop, type RoundResult } from './pg-peer-load.js';
import { sleep } from './stats.js';

const PEER_SCRIPT = fileURLToPath(new URL('./pg-peer-graphile-worker.js', import.meta.url));

/** Killed synchronously if the bench exits early. */
const running = new Set<ChildProcess>();
process.once('exit', () => running.forEach((proc) => proc.kill('SIGKILL')));

interface PeerProcess {
  proc: ChildProcess;
  latency: Array<{ addedAtMs: number; startMs: number }>;
  summary: Promise<{ jobs: number; firstStartMs: number; lastEndMs: number }>;
}

/**
 * One graphile-worker round on database `dbUrl`: `jobs` trivial jobs added up front, then `processes`
 * worker processes of `concurrency` each started, and timed until the queue is empty; then, with the
 * same processes, a light load of `ratePerS` jobs/s for `seconds` s, each job's add→start measured.
 */
export async function graphileRound(
  dbUrl: string,
  o: { jobs: number; processes: number; concurrency: number; ratePerS: number; seconds: number },
): Promise<RoundResult> {
  const utils = await makeWorkerUtils({ connectionString: dbUrl });
  const probe = new pg.Client({ connectionString: dbUrl });
  await probe.connect();
  const fleet: PeerProcess[] = [];
  try {
    await utils.migrate();
    for (let i = 0; i < o.jobs; i += 1000) {
      await utils.addJobs(
        Array.from({ length: Math.min(1000, o.jobs - i) }, () => ({
          identifier: 'noop',
          payload: {},
        })),
      );
    }
    const spawnedMs = Date.now();
    fleet.push(
      ...(await Promise.all(
        Array.from({ length: o.processes }, () => spawnPeer(dbUrl, o.concurrency)),
      )),
    );
    const readyMs = Date.now();
    while (
      Number(
        (await probe.query<{ n: string }>('select count(*) as n from graphile_worker.jobs'))
          .rows[0]!.n,
      ) > 0
    )
      await sleep(20);
    const drainedMs = Date.now();

    const load = await openLoop(o.ratePerS, o.seconds, (i) =>
      utils.addJob('noop', { added_at_ms: Date.now(), i }).then(() => undefined),
    );
    while (fleet.reduce((n, p) => n + p.latency.length, 0) < load.sent) await sleep(20);

    for (const p of fleet) p.proc.kill('SIGTERM');
    const summaries = await Promise.all(fleet.map((p) => p.summary));
    const busy = summaries.filter((s) => s.jobs > 0);
    const samples = fleet.flatMap((p) => p.latency.map((l) => l.startMs - l.addedAtMs));
    return {
      items: o.jobs,
      workMs:
        Math.max(...busy.map((s) => s.lastEndMs)) - Math.min(...busy.map((s) => s.firstStartMs)),
      wallMs: drainedMs - spawnedMs,
      startupMs: readyMs - spawnedMs,
      perProcess: summaries.map((s) => s.jobs),
      latencyMs: samples,
      clientLatencyMs: samples,
      loadSent: load.sent,
      loadLagMs: load.maxLagMs,
    };
  } finally {
    for (const p of fleet)
      if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGKILL');
    await Promise.all(fleet.map((p) => p.summary.catch(() => undefined)));
    await probe.end().catch(() => undefined);
    await utils.release();
  }
}

function spawnPeer(dbUrl: string, concurrency: number): Promise<PeerProcess> {
  const proc = spawn(process.execPath, [PEER_SCRIPT], {
    env: { PATH: process.env.PATH ?? '', PEER_DB: dbUrl, PEER_CONCURRENCY: String(concurrency) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(proc);
  const stderr: string[] = [];
  proc.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const latency: PeerProcess['latency'] = [];
  let pending = '';
  let onReady: () => void = () => undefined;
  let onSummary: (s: Awaited<PeerProcess['summary']>) => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  const summary = new Promise<Awaited<PeerProcess['summary']>>((resolve, reject) => {
    onSummary = resolve;
    proc.once('exit', (code, signal) => {
      running.delete(proc);
      reject(
        new Error(
          `graphile-worker process exited (${code ?? signal}) without a summary:\n${stderr.join('')}`,
        ),
      );
    });
  });
  proc.stdout!.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString()).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (line === 'ready') onReady();
      else if (line.startsWith('lat ')) {
        const [, added, start] = line.split(' ');
        latency.push({ addedAtMs: Number(added), startMs: Number(start) });
      } else if (line.startsWith('summary '))
        onSummary(JSON.parse(line.slice(8)) as Awaited<PeerProcess['summary']>);
    }
  });
  return Promise.race([
    ready.then(() => ({ proc, latency, summary })),
    summary.then(() =>
      Promise.reject(new Error('graphile-worker process stopped before it was ready')),
    ),
  ]);
}
