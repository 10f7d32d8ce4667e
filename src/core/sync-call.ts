import type { SyncContext, SyncInput, SyncResult } from '../sdk/index.js';
import type { RegisteredModule } from './registry.js';

/** A module broke the SyncResult contract; retried like any failure, with a message that says so. */
export class InvalidSyncResultError extends Error {
  override readonly name = 'InvalidSyncResultError';
}

export interface SyncCallOptions {
  timeoutMs: number;
  /** Largest `output` + `data` accepted, as JSON characters. */
  maxStateBytes: number;
}

/**
 * Calls `sync` with a deadline: at `timeoutMs` the signal aborts and the call
 * counts as failed even if the module ignores the signal (its promise is left
 * behind; its result, if any, is never written).
 */
export async function callSync(
  module: RegisteredModule,
  input: SyncInput,
  ctx: Omit<SyncContext, 'signal'>,
  controller: AbortController,
  options: SyncCallOptions,
): Promise<SyncResult> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`sync timed out after ${options.timeoutMs} ms`);
      controller.abort(error);
      reject(error);
    }, options.timeoutMs);
  });
  const aborted = new Promise<never>((_, reject) => {
    const onAbort = () => reject(controller.signal.reason instanceof Error ? controller.signal.reason : new Error('sync aborted'));
    if (controller.signal.aborted) onAbort();
    else controller.signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const call = Promise.resolve().then(() => module.definition.sync(input, { ...ctx, signal: controller.signal }));
    const result = await Promise.race([call, deadline, aborted]);
    return checkSyncResult(module, result, options);
  } finally {
    clearTimeout(timer);
  }
}

function checkSyncResult(module: RegisteredModule, result: unknown, options: SyncCallOptions): SyncResult {
  const kind = module.definition.kind;
  const fail = (problem: string): never => {
    throw new InvalidSyncResultError(`sync of kind ${kind} returned an invalid SyncResult: ${problem}`);
  };
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return fail(`expected an object, got ${result === null ? 'null' : typeof result}`);
  const r = result as Record<string, unknown>;
  if (r.status !== 'PENDING' && r.status !== 'COMPLETED') fail(`status must be "PENDING" or "COMPLETED", got ${JSON.stringify(r.status) ?? 'undefined'}`);
  if (r.output !== undefined && (typeof r.output !== 'object' || r.output === null || Array.isArray(r.output))) fail('output must be an object');
  if (r.requeueAfterMs !== undefined && !(typeof r.requeueAfterMs === 'number' && Number.isFinite(r.requeueAfterMs) && r.requeueAfterMs >= 0)) {
    fail('requeueAfterMs must be a non-negative number');
  }
  let size: number;
  try {
    size = (JSON.stringify(r.output ?? null)?.length ?? 0) + (JSON.stringify(r.data ?? null)?.length ?? 0);
  } catch (err) {
    return fail(`output and data must be JSON (${(err as Error).message})`);
  }
  if (size > options.maxStateBytes) fail(`output and data are ${size} bytes of JSON, more than the ${options.maxStateBytes} allowed`);
  if (r.output !== undefined && module.checkOutput) {
    const problems = module.checkOutput(structuredClone(r.output));
    if (problems.length) fail(`output does not match outputSchema: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`);
  }
  return r as unknown as SyncResult;
}
