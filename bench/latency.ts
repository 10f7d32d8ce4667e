import { startBenchSteward } from './instance.js';
import { runLoad } from './load.js';
import { benchName, NOOP_KIND, noopUrn } from './noop-module.js';
import { summarize, type Summary, until } from './stats.js';

export interface LatencyPlan {
  createsPerS: number;
  getsPerS: number;
  durationMs: number;
  /** COMPLETED resources the GETs read, round robin. */
  readSet: number;
}

export interface LatencyResult {
  plan: LatencyPlan;
  /** Operation created_at → finished_at, from the operations table (ms resolution). */
  createToCompleted: Summary;
  /** created_at → started_at: waiting to be claimed. */
  createToClaimed: Summary;
  /** started_at → finished_at: claim, sync, write-back. */
  claimedToCompleted: Summary;
  /** Client-side POST /resources round trip. */
  post: Summary;
  /** Client-side GET /resources/{urn} round trip, measured while the creates run. */
  get: Summary;
}

/** A light steady load over real HTTP with the worker running: how long a create takes to reach COMPLETED, and how fast reads stay. */
export async function measureLatency(plan: LatencyPlan): Promise<LatencyResult> {
  const project = 'lat';
  const bench = await startBenchSteward({ worker: true });
  try {
    const { steward, probe, api } = bench;
    const getUrns: string[] = [];
    for (let i = 0; i < plan.readSet; i += 1) {
      await steward.commands.create(
        { kind: NOOP_KIND, project: 'reads', name: benchName(i) },
        { actor: 'bench' },
      );
      getUrns.push(noopUrn('reads', benchName(i)));
    }
    await until(() => probe.pending('reads') === 0, 'the read set to be COMPLETED');

    const load = await runLoad({
      mode: 'paced',
      api,
      project,
      createsPerS: plan.createsPerS,
      getsPerS: plan.getsPerS,
      durationMs: plan.durationMs,
      getUrns,
    });
    if (load.failures.length)
      throw new Error(`requests failed: ${load.failures.slice(0, 3).join('; ')}`);
    await until(() => probe.pending(project) === 0, 'the paced creates to be COMPLETED');
    const operations = probe.operations(project);
    const failed = operations.filter((op) => op.status !== 'succeeded');
    if (failed.length || operations.length !== load.operationIds.length)
      throw new Error(`${failed.length} operations did not succeed`);
    return {
      plan,
      createToCompleted: summarize(operations.map((op) => op.finishedMs - op.createdMs)),
      createToClaimed: summarize(operations.map((op) => op.startedMs - op.createdMs)),
      claimedToCompleted: summarize(operations.map((op) => op.finishedMs - op.startedMs)),
      post: summarize(load.postMs),
      get: summarize(load.getMs),
    };
  } finally {
    await bench.close();
  }
}
