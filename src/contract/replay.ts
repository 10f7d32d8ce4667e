import { diffJson, jsonEqual } from '../core/json.js';
import { isTerminalError, type SyncInput, type SyncResult } from '../sdk/index.js';
import { observeOnce, syncInputOf } from './direct-calls.js';
import { type ConvergeContext, message, syncOnce } from './kit-context.js';
import type { SyncCall } from './recording-module.js';

/** A replay that throws is tried this often, as the engine would retry it, before it counts as a failure. */
const REPLAY_ATTEMPTS = 3;

/** An ISO 8601 date-time: a step run again later may stamp a later time (a file's mtime). */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/;

/**
 * Rule 5: calls sync again with a step's input, as a crash between the side
 * effect and the write-back would; true when it was compared (the first run must
 * have succeeded). A throw is retried like the engine would (a transient failure
 * is not a broken step); a TerminalError, or a throw every time, fails. The
 * second run must leave everything as the first did: the same status, data and
 * output, and, for a kind with `observe`, the same backend as observe sees it
 * (exists, configs, output) before and after the second run (not for a step that
 * returned `requeueAfterMs`: its backend moves by itself). Where both values are
 * date-times they may differ. A step that only waited (PENDING after
 * requeueAfterMs, data unchanged) polls a backend that moves on by itself: only a
 * throw of its re-run fails.
 */
export async function replay(
  ctx: ConvergeContext,
  call: SyncCall,
  urn: string,
  label: string,
): Promise<boolean> {
  if (!('value' in call.outcome)) return false;
  const first = call.outcome.value;
  const dataOf = (result: SyncResult) =>
    result.data === undefined ? call.input.resource.state.data : result.data;
  const polled =
    first.status === 'PENDING' &&
    first.requeueAfterMs !== undefined &&
    jsonEqual(normal(dataOf(first)), normal(call.input.resource.state.data));
  // a step that asked to be called again later waits on a backend that moves by itself (a job running): not observed
  const waits = first.status === 'PENDING' && first.requeueAfterMs !== undefined;
  const observes = typeof ctx.original.definition.observe === 'function' && !waits;
  const observeInput = observes ? ((await syncInputOf(ctx, urn)) ?? call.input) : undefined;
  const before = observeInput && (await backend(ctx, observeInput));

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
  const again = `${label}: run again with the same input,`;
  if (!polled) {
    if (first.status !== second.status || !jsonEqual(normal(dataOf(first)), normal(dataOf(second))))
      ctx.book.fail(
        'sync-idempotent',
        `${again} sync returned ${second.status} with data ${preview(dataOf(second))}; the first run returned ${first.status} with data ${preview(dataOf(first))}`,
      );
    const output = changedPaths(first.output, second.output);
    if (output)
      ctx.book.fail(
        'sync-idempotent',
        `${again} sync returned another output (at ${output}) than the first run`,
      );
  }
  if (observeInput && before) {
    const after = await backend(ctx, observeInput);
    const changed = changedPaths(before, after);
    if (changed)
      ctx.book.fail(
        'sync-idempotent',
        `${again} the backend as observe sees it changed (at ${changed}): the step is not idempotent`,
      );
    else ctx.replayedObserved += 1;
  }
  return true;
}

/** What observe says of the backend: exists, configs and output (data is the module's own bookkeeping), or its error. */
async function backend(ctx: ConvergeContext, input: SyncInput): Promise<unknown> {
  const { outcome } = await observeOnce(ctx, input);
  if (!('value' in outcome)) return { error: message(outcome.error) };
  const { exists, configs, output } = outcome.value;
  return normal({ exists, configs, output });
}

/** The JSON pointers where two values differ, date-times on both sides excepted; '' when none. Never the values. */
export function changedPaths(before: unknown, after: unknown): string {
  const paths = diffJson(normal(before), normal(after))
    .filter(
      (change) =>
        !(
          typeof change.from === 'string' &&
          typeof change.to === 'string' &&
          DATE_TIME.test(change.from) &&
          DATE_TIME.test(change.to)
        ),
    )
    .map((change) => change.path);
  return paths.length > 3 ? `${paths.slice(0, 3).join(', ')}, …` : paths.join(', ');
}

function normal(value: unknown): unknown {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as unknown);
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
