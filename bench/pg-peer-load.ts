import { sleep } from './stats.js';

/** What one round (Steward or graphile-worker, at one process count) measured. */
export interface RoundResult {
  /** Resources reconciled, or jobs run, in the throughput phase. */
  items: number;
  /** From the first item's start to the last item's end, by the items' own timestamps. */
  workMs: number;
  /** From spawning the worker processes to the poll that saw the backlog done (start-up included). */
  wallMs: number;
  /** From spawning the worker processes until every one reported it had started. */
  startupMs: number;
  /** Throughput items handled by each process. */
  perProcess: number[];
  /** The latency figure of the comparison: Steward operation created_at → finished_at; graphile-worker add → task start. */
  latencyMs: number[];
  /** The same, from the client's clock just before it sent the create / add. */
  clientLatencyMs: number[];
  /** Creates or adds sent by the light load. */
  loadSent: number;
  /** How late the load generator sent its worst request against its schedule. */
  loadLagMs: number;
}

/**
 * An open-loop load: `send(i)` at `ratePerS` for `seconds`, on a fixed schedule whatever the answers
 * take (a closed loop would hide queueing). Resolves once every send has settled; a failed send throws.
 */
export async function openLoop(
  ratePerS: number,
  seconds: number,
  send: (i: number) => Promise<void>,
): Promise<{ sent: number; maxLagMs: number }> {
  const total = ratePerS * seconds;
  const t0 = Date.now();
  const inFlight: Array<Promise<void>> = [];
  let maxLagMs = 0;
  for (let i = 0; i < total; i += 1) {
    const dueMs = t0 + (i * 1000) / ratePerS;
    if (dueMs > Date.now()) await sleep(dueMs - Date.now());
    maxLagMs = Math.max(maxLagMs, Date.now() - dueMs);
    inFlight.push(send(i));
  }
  await Promise.all(inFlight);
  return { sent: total, maxLagMs };
}

/** Runs `task` on `items` with at most `concurrency` at once. */
export async function inParallel<T>(
  items: readonly T[],
  concurrency: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const runner = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: concurrency }, runner));
}
