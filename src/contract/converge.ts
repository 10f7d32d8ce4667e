import { jsonEqual } from '../core/json.js';
import type { Resource } from '../core/model.js';
import type { RegisteredModule } from '../core/modules/registry.js';
import { callSync } from '../core/sync/run-module.js';
import { isTerminalError, type SyncInput, type SyncResult } from '../sdk/index.js';
import type { ContractSteward } from './contract-steward.js';
import type { SyncCall } from './recording-module.js';
import type { RuleBook } from './rules.js';
import type { SecretWatch } from './secret-watch.js';

/** What the lifecycle hands each convergence. */
export interface ConvergeContext {
  steward: ContractSteward;
  /** Every sync call the engine made, as recorded. */
  syncs: SyncCall[];
  /** The registered module with the author's own definition (not the recording), for replays. */
  original: RegisteredModule;
  book: RuleBook;
  secrets: SecretWatch;
  stepBudget: number;
  /** Sync steps replayed and compared so far (rule 5 reports the total). */
  replayed: number;
  syncTimeoutMs: number;
  maxStateBytes: number;
  /** The most real time one wait is also waited (see `waitUntilDue`). */
  maxRealWaitMs: number;
}

export interface Convergence {
  end: 'COMPLETED' | 'DELETED' | 'ERROR' | 'GONE' | 'OUT_OF_BUDGET';
  /** Sync calls the engine made for this action. */
  steps: number;
  /** Why it ended as it did, in words. */
  detail: string;
  /** The input of the action's first sync call (rule 7 runs delete again from it). */
  firstInput?: SyncInput;
}

/**
 * Steps the real engine (`runOnce`) until the action on `urn` ends, within the step
 * budget. After each step it replays that step's sync call with the same input, as
 * a crash between the side effect and the write-back would (rule 5), and checks
 * the stored resource for secrets (rule 8). Waits (backoff, `requeueAfterMs`)
 * cost little time: see `waitUntilDue`.
 */
export async function converge(
  ctx: ConvergeContext,
  urn: string,
  action: string,
  label: string,
): Promise<Convergence> {
  const { steward } = ctx;
  let steps = 0;
  let firstInput: SyncInput | undefined;
  for (let round = 0; round < ctx.stepBudget * 3 + 10 && steps < ctx.stepBudget; round += 1) {
    const before = ctx.syncs.length;
    const claimed = await steward.engine.runOnce(1);
    for (const call of ctx.syncs.slice(before)) {
      steps += 1;
      firstInput ??= call.input;
      if (await replay(ctx, call, `${label} step ${steps}`)) ctx.replayed += 1;
    }
    const stored = await steward.store.findResource(urn);
    ctx.secrets.check(stored, `${label} after ${steps} sync call${steps === 1 ? '' : 's'}`);
    const done = (end: Convergence['end'], detail: string): Convergence => ({
      end,
      steps,
      detail,
      firstInput,
    });
    const after = `after ${steps} sync call${steps === 1 ? '' : 's'}`;
    if (!stored) return done(action === 'delete' ? 'DELETED' : 'GONE', `removed ${after}`);
    if (stored.state.status === 'COMPLETED') return done('COMPLETED', `COMPLETED ${after}`);
    if (stored.state.status === 'ERROR')
      return done(
        'ERROR',
        `ERROR ${after}: ${stored.state.sync.last_error ?? 'no error recorded'}`,
      );
    if (claimed === 0) await waitUntilDue(steward, stored, ctx.maxRealWaitMs);
  }
  const last = ctx.syncs.at(-1)?.outcome;
  const lastSaid = !last
    ? 'sync was never called'
    : 'value' in last
      ? `the last sync returned ${last.value.status}`
      : `the last sync threw: ${message(last.error)}`;
  return {
    end: 'OUT_OF_BUDGET',
    steps,
    detail: `still PENDING after ${steps} sync calls (budget ${ctx.stepBudget}); ${lastSaid}`,
    firstInput,
  };
}

/**
 * Not due yet (backoff, requeueAfterMs, a dependency poll): waits in real time
 * for at most `maxRealWaitMs` of it, so a backend the module polls (a job's
 * process, a cloud operation) can move on, then jumps the virtual clock to the
 * due time: an hour's requeue costs `maxRealWaitMs`, not an hour.
 */
export async function waitUntilDue(
  steward: ContractSteward,
  stored: Resource,
  maxRealWaitMs: number,
): Promise<void> {
  const dueMs = Date.parse(stored.state.sync.next_sync_at ?? '') || 0;
  const realMs = Math.min(dueMs - steward.clock().getTime(), maxRealWaitMs);
  if (realMs > 0) await new Promise((resolve) => setTimeout(resolve, realMs));
  steward.advanceTo(Math.max(dueMs, steward.clock().getTime() + 1));
}

/** A replay that throws is tried this often, as the engine would retry it, before it counts as a failure. */
const REPLAY_ATTEMPTS = 3;

/**
 * Calls sync again with a step's input; true when it was compared (the first run
 * must have succeeded). A throw is retried like the engine would (a transient
 * failure is not a broken step); a TerminalError, or a throw every time, fails.
 */
async function replay(ctx: ConvergeContext, call: SyncCall, label: string): Promise<boolean> {
  if (!('value' in call.outcome)) return false;
  const first = call.outcome.value;
  let second: SyncResult | undefined;
  for (let attempt = 1; !second; attempt += 1) {
    try {
      second = await syncOnce(ctx, structuredClone(call.input));
    } catch (err) {
      if (attempt < REPLAY_ATTEMPTS && !isTerminalError(err)) continue;
      const times = attempt === 1 ? '' : ` ${attempt} times`;
      ctx.book.fail(
        'sync-idempotent',
        `${label}: run again with the same input, sync threw${times}: ${message(err)}`,
      );
      return true;
    }
  }
  const dataOf = (result: SyncResult) =>
    result.data === undefined ? call.input.resource.state.data : result.data;
  // A step that only waited (PENDING after requeueAfterMs, data unchanged) polls a backend that moves on by
  // itself: run again a moment later it may see more progress (a job that has just ended). Not a broken step.
  const polled =
    first.status === 'PENDING' &&
    first.requeueAfterMs !== undefined &&
    jsonEqual(normal(dataOf(first)), normal(call.input.resource.state.data));
  if (
    !polled &&
    (first.status !== second.status || !jsonEqual(normal(dataOf(first)), normal(dataOf(second))))
  ) {
    ctx.book.fail(
      'sync-idempotent',
      `${label}: run again with the same input, sync returned ${second.status} with data ${preview(dataOf(second))}; the first run returned ${first.status} with data ${preview(dataOf(first))}`,
    );
  }
  return true;
}

/** One direct sync call with the core's own deadline and result checks (the engine is not involved). */
export function syncOnce(ctx: ConvergeContext, input: SyncInput): Promise<SyncResult> {
  return callSync(
    ctx.original,
    input,
    { log: ctx.secrets.logger, now: ctx.steward.clock },
    new AbortController(),
    {
      timeoutMs: ctx.syncTimeoutMs,
      maxStateBytes: ctx.maxStateBytes,
    },
  );
}

export function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function normal(value: unknown): unknown {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as unknown);
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
