import { startBenchSteward } from './instance.js';
import { runLoad } from './load.js';
import { benchName, NOOP_KIND } from './noop-module.js';
import { summarize, type Summary, until } from './stats.js';

export interface ThroughputResult {
  resources: number;
  concurrency: number;
  /** Creates loaded before the worker started, through `steward.commands.create` (no HTTP). */
  loadPerS: number;
  /** From `engine.start()` to the last operation's `finished_at`. */
  reconcileMs: number;
  reconcilesPerS: number;
}

/** Resources reconciled, untimed, before the measured drain. */
export const WARM_UP_RESOURCES = 2_000;

/**
 * Loads `total` no-op resources with the worker off, then starts the worker at
 * concurrency 8 and times until every one is COMPLETED. First the same on `WARM_UP_RESOURCES` resources
 * of a Steward of its own, not timed: the JIT warms on the path it is measured on, as the API
 * phase's runs do (the first drain of a process ran up to a fifth slower than the next ones).
 */
export async function measureReconcileThroughput(total: number): Promise<ThroughputResult> {
  await drain(WARM_UP_RESOURCES, 'warm-up');
  return drain(total, 'tput');
}

async function drain(total: number, project: string): Promise<ThroughputResult> {
  const bench = await startBenchSteward({ worker: false });
  try {
    const { steward, probe } = bench;
    const loadStarted = Date.now();
    for (let i = 0; i < total; i += 1) {
      await steward.commands.create(
        { kind: NOOP_KIND, project, name: benchName(i) },
        { actor: 'bench' },
      );
    }
    const loadPerS = total / ((Date.now() - loadStarted) / 1000);
    if (probe.pending(project) !== total)
      throw new Error('the load did not leave every resource PENDING');

    const started = Date.now();
    steward.engine.start();
    await until(() => probe.pending(project) === 0, `${total} resources to be COMPLETED`, {
      timeoutMs: 120_000,
    });
    const reconcileMs = Math.max(1, lastFinished(probe.operations(project), total) - started);
    return {
      resources: total,
      concurrency: steward.config.workerConcurrency,
      loadPerS,
      reconcileMs,
      reconcilesPerS: total / (reconcileMs / 1000),
    };
  } finally {
    await bench.close();
  }
}

export interface HttpThroughputResult {
  resources: number;
  concurrency: number;
  clientConnections: number;
  /** Creates answered 202 per second. */
  acceptedPerS: number;
  /** From the first POST to the last operation's `finished_at`. */
  completedPerS: number;
  post: Summary;
}

/** The same, with the worker running while `total` creates arrive over real HTTP from `connections` clients. */
export async function measureHttpThroughput(
  total: number,
  connections: number,
): Promise<HttpThroughputResult> {
  const project = 'http';
  const bench = await startBenchSteward({ worker: true });
  try {
    const { steward, probe, api } = bench;
    const load = await runLoad({ mode: 'burst', api, project, total, concurrency: connections });
    if (load.failures.length)
      throw new Error(`creates failed: ${load.failures.slice(0, 3).join('; ')}`);
    await until(() => probe.pending(project) === 0, `${total} resources to be COMPLETED`, {
      timeoutMs: 120_000,
    });
    const elapsedMs = Math.max(
      1,
      lastFinished(probe.operations(project), total) - load.startedAtMs,
    );
    return {
      resources: total,
      concurrency: steward.config.workerConcurrency,
      clientConnections: connections,
      acceptedPerS: total / ((load.lastAcceptedAtMs - load.startedAtMs) / 1000),
      completedPerS: total / (elapsedMs / 1000),
      post: summarize(load.postMs),
    };
  } finally {
    await bench.close();
  }
}

function lastFinished(
  operations: ReadonlyArray<{ status: string; finishedMs: number }>,
  expected: number,
): number {
  const succeeded = operations.filter((op) => op.status === 'succeeded');
  if (succeeded.length !== expected)
    throw new Error(`${succeeded.length} of ${expected} operations succeeded`);
  return Math.max(...succeeded.map((op) => op.finishedMs));
}
