import type { Resource } from '../core/model.js';
import type { SyncInput } from '../sdk/index.js';
import type { ContractSteward } from './contract-steward.js';
import { type ConvergeContext, message } from './kit-context.js';
import { replay } from './replay.js';

export { type ConvergeContext, message, syncOnce } from './kit-context.js';

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
    const calls = ctx.syncs.slice(before);
    const hung = calls.find((call) => !call.settled);
    if (hung) {
      // The engine gave up at the kit's call timeout and aborted its signal; waiting for its retries would cost more.
      steps += calls.length;
      return {
        end: 'ERROR',
        steps,
        detail: `sync call ${steps} did not answer within the kit's call timeout (callTimeoutMs ${ctx.callTimeoutMs} ms); its signal was aborted`,
        firstInput: firstInput ?? hung.input,
      };
    }
    for (const call of calls) {
      steps += 1;
      firstInput ??= call.input;
      if (!('value' in call.outcome))
        ctx.secrets.checkError(call.outcome.error, `an error sync threw in ${label}`);
      if (await replay(ctx, call, urn, `${label} step ${steps}`)) ctx.replayed += 1;
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
