import type { RegisteredModule } from '../core/modules/registry.js';
import { callSync } from '../core/sync/run-module.js';
import type { SyncInput, SyncResult } from '../sdk/index.js';
import type { ContractSteward } from './contract-steward.js';
import { CallTimeoutError, type SyncCall } from './recording-module.js';
import type { RuleBook } from './rules.js';
import type { SecretWatch } from './secret-watch.js';

/** What the lifecycle hands each convergence and each direct call of the module. */
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
  /** Of those, the ones whose backend was observed before and after the replay. */
  replayedObserved: number;
  /** The longest one plan, sync or observe call may take (the `callTimeoutMs` option). */
  callTimeoutMs: number;
  maxStateBytes: number;
  /** The most real time one wait is also waited (see `waitUntilDue`). */
  maxRealWaitMs: number;
  /**
   * Set once an `observe` call has not answered within `callTimeoutMs`: every later observe
   * of the run fails at once with the same error, so a hung `observe` costs one timeout, not
   * one per call (the rules make dozens).
   */
  observeTimedOut?: CallTimeoutError;
}

/**
 * One direct sync call with the core's own result checks (the engine is not
 * involved), within the kit's call timeout: a CallTimeoutError after it, with the
 * call's signal aborted. A thrown error's message is shown to the secret watch.
 */
export async function syncOnce(ctx: ConvergeContext, input: SyncInput): Promise<SyncResult> {
  try {
    return await callSync(
      ctx.original,
      input,
      { log: ctx.secrets.logger, now: ctx.steward.clock },
      new AbortController(),
      { timeoutMs: ctx.callTimeoutMs, maxStateBytes: ctx.maxStateBytes },
    );
  } catch (err) {
    ctx.secrets.checkError(err, 'an error sync threw');
    throw asCallTimeout(err, 'sync', ctx.callTimeoutMs);
  }
}

/** The core's deadline error (`<call> timed out after N ms`) as the kit's CallTimeoutError; others as they are. */
export function asCallTimeout(err: unknown, call: string, timeoutMs: number): unknown {
  return err instanceof Error && err.message === `${call} timed out after ${timeoutMs} ms`
    ? new CallTimeoutError(call, timeoutMs)
    : err;
}

export function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
