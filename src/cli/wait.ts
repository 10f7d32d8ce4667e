import type { Operation, Resource } from './api-documents.js';
import type { SpecChange } from './api-documents.js';
import { CliError, EXIT } from './cli-error.js';
import type { CliContext } from './context.js';
import { ApiError, segment } from './http-client.js';
import { oneLine } from './output.js';

/** The answer of every accepted write: 202 `{resource, operation}` (200 with dry_run). */
export interface Accepted {
  resource: Resource;
  operation: Operation;
  dry_run?: true;
  /** A dry run's review (docs/design.md §11): the fields that would change, and the planned steps. */
  changes?: SpecChange[];
  steps?: string[];
}

export interface WaitOptions {
  /** Give up after this long (the work goes on); undefined waits for ever. */
  timeoutMs?: number;
  pollMs?: number;
}

/** --wait and --timeout, as the mutating commands declare them. */
export function waitOptionsOf(options: {
  wait?: boolean;
  timeout?: string;
}): WaitOptions | undefined {
  if (!options.wait) {
    if (options.timeout !== undefined)
      throw new CliError('--timeout only applies with --wait', EXIT.usage);
    return undefined;
  }
  if (options.timeout === undefined) return {};
  const seconds = Number(options.timeout);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new CliError('--timeout must be a positive number of seconds', EXIT.usage);
  return { timeoutMs: seconds * 1000 };
}

const FINAL: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled']);

/**
 * Polls the operation until it is final, showing progress on stderr: status,
 * current step, attempts and last error. A terminal gets one line redrawn in
 * place; anything else (a log, a CI job) gets a new line only when the status,
 * step or error changes, since a long step may count hundreds of attempts.
 * Resolves with the final operation and the resource (null once a delete has
 * removed it).
 */
export async function waitForOperation(
  ctx: CliContext,
  accepted: Accepted,
  options: WaitOptions = {},
): Promise<{ operation: Operation; resource: Resource | null }> {
  const { client, out } = ctx;
  const { urn } = accepted.resource;
  const id = accepted.operation.id;
  const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
  let shownKey = '';
  let shownLine = '';
  for (;;) {
    const operation = await client.request<Operation>('GET', `/operations/${segment(id)}`);
    const resource = await client
      .request<Resource>('GET', `/resources/${segment(urn)}`)
      .catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 404) return null;
        throw err;
      });
    const { key, line } = progressLine(operation, resource);
    const final = FINAL.has(operation.status);
    if (out.interactive) {
      if (final) out.redraw('');
      else if (line !== shownLine) out.redraw(line);
    }
    if (final || (!out.interactive && key !== shownKey)) out.note(line);
    shownKey = key;
    shownLine = line;
    if (final) return { operation, resource };
    if (Date.now() >= deadline) {
      if (out.interactive) out.redraw('');
      throw new CliError(
        `gave up waiting for ${operation.action} of ${urn} (operation ${id}) after ${options.timeoutMs! / 1000}s; it goes on`,
        EXIT.timeout,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 200));
  }
}

/**
 * `orn:…: PENDING (create running), step chmod, attempts 1, last error: …`;
 * `key` is the line without the attempts, what a non-terminal prints on.
 */
export function progressLine(
  operation: Operation,
  resource: Resource | null,
): { key: string; line: string } {
  if (FINAL.has(operation.status)) {
    const result =
      resource === null && operation.action === 'delete' && operation.status === 'succeeded'
        ? 'deleted'
        : (resource?.state.status ?? operation.status);
    const error = operation.error ? `: ${oneLine(operation.error)}` : '';
    const line = `${operation.urn}: ${result} (${operation.action} ${operation.status}, attempts ${operation.attempts})${error}`;
    return { key: line, line };
  }
  const head = `${operation.urn}: ${resource?.state.status ?? 'PENDING'} (${operation.action} ${operation.status})`;
  const current = resource?.state.operation_id === operation.id ? resource : null;
  const step = current ? currentStep(current) : undefined;
  const error = current?.state.sync.last_error
    ? `last error: ${oneLine(current.state.sync.last_error)}`
    : undefined;
  const key = [head, step, error].filter(Boolean).join(', ');
  const line = [head, step, `attempts ${operation.attempts}`, error].filter(Boolean).join(', ');
  return { key, line };
}

/** The module's next step (`state.data.pending[0]`, the convention of the built-in modules) or what it waits on. */
function currentStep(resource: Resource): string | undefined {
  const waitingOn = resource.state.sync.waiting_on;
  if (Array.isArray(waitingOn) && waitingOn.length > 0) return `waiting on ${waitingOn.join(', ')}`;
  const pending = (resource.state.data as { pending?: unknown } | null)?.pending;
  if (Array.isArray(pending) && typeof pending[0] === 'string') return `step ${pending[0]}`;
  return undefined;
}

/** The exit of a waited command: 0 when the operation succeeded, else the reason. */
export function assertSucceeded(operation: Operation): void {
  if (operation.status !== 'succeeded') {
    throw new CliError(
      `${operation.action} of ${operation.urn} ${operation.status}: ${operation.error ?? 'no reason given'}`,
      EXIT.failure,
    );
  }
}
