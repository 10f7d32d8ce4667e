import {
  isTerminalError,
  type ResolvedDependency,
  type SyncContext,
  type SyncInput,
  type SyncResult,
  TerminalError,
} from '../../sdk/index.js';
import { describeError } from '../errors.js';
import type { CoreLogger } from '../logging.js';
import type { Resource } from '../model.js';
import type { RegisteredModule, Registry } from '../modules/registry.js';
import { toResolved } from '../requests/dependencies.js';
import { OUTPUT, requireReadable, secretStringsOf } from '../secrets/sealed-resources.js';
import type { SealedStore } from '../secrets/sealing-store.js';
import { SEALED_PREFIX } from '../secrets/secret-box.js';
import { findSealed, scrubSecrets } from '../secrets/secrets.js';
import type { SyncObservation } from './decide-write-back.js';
import { removalGate } from './removal-gate.js';

export interface RunModuleDeps {
  store: Pick<SealedStore, 'findResources' | 'findDependents' | 'unreadableSecretsOf'>;
  registry: Registry;
  clock: () => Date;
  timeoutMs: number;
  maxStateBytes: number;
}

/**
 * Runs the module's `sync` once, as the loop sees it: the module's result, a failure, or a wait on
 * dependencies that are not COMPLETED (a delete does not wait: it only needs them
 * to exist). A delete or an orphan waits on its dependents instead, and an orphan never calls
 * the module (removal-gate.ts). Never throws.
 *
 * Secrets cross here: the module gets the resource and its dependencies' outputs
 * as the sealing store opened them (one that did not open fails the sync, naming
 * it), and a failure that quotes one of the secrets it was given has it replaced
 * by `[secret]`. (The store seals the output it returns when it is written back.)
 */
export async function runModule(
  deps: RunModuleDeps,
  resource: Resource,
  controller: AbortController,
  log: CoreLogger,
): Promise<SyncObservation> {
  const removal = await removalGate(deps.store, resource);
  if (removal) return removal;
  const module = deps.registry.find(resource.kind);
  if (!module)
    return {
      type: 'failure',
      error: new TerminalError(`no module is loaded for kind ${resource.kind}`),
    };
  let shown: string[] = [];
  try {
    const dependencies: Record<string, ResolvedDependency> = {};
    const unreadable = [...deps.store.unreadableSecretsOf(resource)];
    const wanted = resource.spec.dependencies;
    const names = Object.keys(wanted);
    if (names.length) {
      const found = new Map(
        (await deps.store.findResources(Object.values(wanted))).map((dep) => [dep.urn, dep]),
      );
      const missing = names.filter((name) => !found.has(wanted[name]!));
      if (missing.length)
        return {
          type: 'failure',
          error: new TerminalError(`dependency ${missing.join(', ')} no longer exists`),
        };
      const waiting = names.filter(
        (name) => found.get(wanted[name]!)!.state.status !== 'COMPLETED',
      );
      if (waiting.length && resource.state.action !== 'delete')
        return { type: 'waiting', on: waiting };
      for (const name of names) {
        const dependency = found.get(wanted[name]!)!;
        dependencies[name] = toResolved(dependency);
        for (const u of deps.store.unreadableSecretsOf(dependency))
          if (u.pointer.startsWith(`${OUTPUT}/`))
            unreadable.push({ ...u, message: `dependency ${name}: ${u.message}` });
      }
    }
    requireReadable(unreadable);
    shown = secretStringsOf(resource, dependencies, (kind) => deps.registry.find(kind)?.definition);
    const input: SyncInput = { resource, dependencies };
    const result = await callSync(module, input, { log, now: deps.clock }, controller, {
      timeoutMs: deps.timeoutMs,
      maxStateBytes: deps.maxStateBytes,
    });
    return { type: 'result', result };
  } catch (error) {
    return { type: 'failure', error: withoutSecrets(error, shown) };
  }
}

/** The failure as is, or, when its message quotes a secret, the same kind of failure with `[secret]` in its place. */
function withoutSecrets(error: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0) return error;
  const message = describeError(error);
  const scrubbed = scrubSecrets(message, secrets);
  if (scrubbed === message) return error;
  return isTerminalError(error) ? new TerminalError(scrubbed) : new Error(scrubbed);
}

/** A module broke the SyncResult contract; retried like any failure, with a message that says so. */
export class InvalidSyncResultError extends Error {
  override readonly name = 'InvalidSyncResultError';
}

export interface SyncCallOptions {
  timeoutMs: number;
  /** Largest `output` + `data` accepted, as UTF-8 bytes of JSON. */
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
    const onAbort = () =>
      reject(
        controller.signal.reason instanceof Error
          ? controller.signal.reason
          : new Error('sync aborted'),
      );
    if (controller.signal.aborted) onAbort();
    else controller.signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const call = Promise.resolve().then(() =>
      module.definition.sync(input, { ...ctx, signal: controller.signal }),
    );
    const result = await Promise.race([call, deadline, aborted]);
    return checkSyncResult(module, result, options);
  } finally {
    clearTimeout(timer);
  }
}

function checkSyncResult(
  module: RegisteredModule,
  result: unknown,
  options: SyncCallOptions,
): SyncResult {
  const kind = module.definition.kind;
  const fail = (problem: string): never => {
    throw new InvalidSyncResultError(
      `sync of kind ${kind} returned an invalid SyncResult: ${problem}`,
    );
  };
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    return fail(
      `expected an object, got ${result === null ? 'null' : Array.isArray(result) ? 'an array' : typeof result}`,
    );
  }
  // Each member is read once and output/data are copied through JSON: what is checked is what gets stored,
  // even if the module changes its objects after returning them (the write-back is batched a tick later).
  const { status, output, data, requeueAfterMs } = result as Record<string, unknown>;
  if (status !== 'PENDING' && status !== 'COMPLETED')
    fail(`status must be "PENDING" or "COMPLETED", got ${JSON.stringify(status) ?? 'undefined'}`);
  if (
    output !== undefined &&
    (typeof output !== 'object' || output === null || Array.isArray(output))
  )
    fail('output must be an object');
  if (
    requeueAfterMs !== undefined &&
    !(typeof requeueAfterMs === 'number' && Number.isFinite(requeueAfterMs) && requeueAfterMs >= 0)
  ) {
    fail('requeueAfterMs must be a non-negative number');
  }
  let outputJson: string | undefined;
  let dataJson: string | undefined;
  try {
    outputJson = output === undefined ? undefined : JSON.stringify(output);
    dataJson = data === undefined ? undefined : JSON.stringify(data);
  } catch (err) {
    return fail(`output and data must be JSON (${(err as Error).message})`);
  }
  if (output !== undefined && outputJson === undefined) fail('output must be JSON');
  if (data !== undefined && dataJson === undefined) fail(`data must be JSON, got ${typeof data}`);
  const size = Buffer.byteLength(outputJson ?? 'null') + Buffer.byteLength(dataJson ?? 'null');
  if (size > options.maxStateBytes)
    fail(
      `output and data are ${size} bytes of JSON, more than the ${options.maxStateBytes} allowed (STEWARD_MAX_STATE_BYTES)`,
    );
  const checked: SyncResult = { status: status as SyncResult['status'] };
  if (outputJson !== undefined) checked.output = JSON.parse(outputJson) as SyncResult['output'];
  if (dataJson !== undefined) checked.data = JSON.parse(dataJson) as unknown;
  if (requeueAfterMs !== undefined) checked.requeueAfterMs = requeueAfterMs as number;
  if (checked.output !== undefined && module.checkOutput) {
    const problems = module.checkOutput(structuredClone(checked.output));
    if (problems.length)
      fail(
        `output does not match outputSchema: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
      );
  }
  // Every sealed value in the store is one Steward made (planning.ts refuses the prefix in configs).
  const sealed = checked.output === undefined ? undefined : findSealed(checked.output);
  if (sealed !== undefined)
    fail(
      `output${sealed} must not start with "${SEALED_PREFIX}": Steward reserves it for sealed secrets`,
    );
  return checked;
}
