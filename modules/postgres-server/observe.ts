import type { ObserveResult, SyncContext, SyncInput } from '../../src/sdk/index.js';
import type { PostgresConnect } from './connection.js';
import type { ServerData } from './plan.js';
import type { ServerConfigs, ServerOutput } from './schema.js';
import { readServer } from './sync.js';

/** Nothing listens there: connection refused on TCP, no socket file in the directory. */
const NOTHING_THERE = new Set(['ECONNREFUSED', 'ENOENT']);

/**
 * Connects and reads the version, as sync does, and changes nothing (sync changes
 * nothing either: a server is only ever read). A server that nothing answers for at
 * host and port does not exist (`exists: false`); refused credentials, a timeout, a
 * name that does not resolve or a target outside STEWARD_POSTGRES_TARGETS mean it
 * could not be looked at, and throw. No config is reported: every one is Steward's
 * way in, not a property of the server, so none can drift.
 */
export async function observeServer(
  connect: PostgresConnect,
  input: SyncInput<ServerConfigs, ServerOutput, ServerData>,
  ctx: SyncContext,
): Promise<ObserveResult<ServerConfigs, ServerOutput, ServerData>> {
  try {
    const output = await readServer(connect, input.resource.spec.configs, ctx);
    return { exists: true, output, data: { pending: [] } };
  } catch (err) {
    if (NOTHING_THERE.has(String(errorCode(err)))) return { exists: false };
    throw err;
  }
}

/** The system error's code, on the error or on the one `classify` wrapped. */
function errorCode(err: unknown): unknown {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  return e?.code ?? e?.cause?.code;
}
