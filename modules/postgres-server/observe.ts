import {
  type ObserveResult,
  type SyncContext,
  type SyncInput,
  TerminalError,
} from '../../src/sdk/index.js';
import type { PostgresConnect } from './connection.js';
import { type DataDirectoryPolicy, hostsOf, type Postmaster } from './data-directory.js';
import type { ServerData } from './plan.js';
import type { ServerConfigs, ServerOutput } from './schema.js';
import { readServer } from './sync.js';
import type { TargetPolicy } from './targets.js';

/** Nothing listens there: connection refused on TCP, no socket file in the directory. */
const NOTHING_THERE = new Set(['ECONNREFUSED', 'ENOENT']);

type Observed = ObserveResult<ServerConfigs, ServerOutput, ServerData>;

/** What observe reads the server through: the guarded connect and the operator's two lists. */
export interface ServerObserver {
  connect: PostgresConnect;
  targets: Pick<TargetPolicy, 'refusal'>;
  dataDirectories: Pick<DataDirectoryPolicy, 'readPostmaster'>;
}

/**
 * Connects and reads the version, as sync does, and changes nothing (sync changes
 * nothing either: a server is only ever read). A server that nothing answers for at
 * host and port does not exist (`exists: false`); refused credentials, a timeout, a
 * name that does not resolve or a target outside STEWARD_POSTGRES_TARGETS mean it
 * could not be looked at, and throw. Without data_directory no config is reported:
 * every one is Steward's way in, not a property of the server, so none can drift.
 * With it, the server is the one postmaster.pid names: no live postmaster is
 * `exists: false`, and its port and host are reported (an import fills them in).
 */
export async function observeServer(
  observer: ServerObserver,
  input: SyncInput<ServerConfigs, ServerOutput, ServerData>,
  ctx: SyncContext,
): Promise<Observed> {
  const configs = input.resource.spec.configs;
  if (configs.data_directory === undefined) return look(observer.connect, configs, ctx);
  const postmaster = await observer.dataDirectories.readPostmaster(configs.data_directory);
  if (postmaster === null) return { exists: false };
  const found = {
    host: hostOf(observer.targets, postmaster, configs),
    port: postmaster.port,
  };
  const result = await look(observer.connect, { ...configs, ...found }, ctx);
  return result.exists ? { ...result, configs: found } : result;
}

async function look(
  connect: PostgresConnect,
  configs: ServerConfigs,
  ctx: SyncContext,
): Promise<Observed> {
  try {
    const output = await readServer(connect, configs, ctx);
    return { exists: true, output, data: { pending: [] } };
  } catch (err) {
    if (NOTHING_THERE.has(String(errorCode(err)))) return { exists: false };
    throw err;
  }
}

/**
 * The spec's host when the server listens there (so a refresh reports no drift), otherwise the
 * first of its listen address and socket directory that STEWARD_POSTGRES_TARGETS allows.
 */
function hostOf(
  targets: Pick<TargetPolicy, 'refusal'>,
  postmaster: Postmaster,
  configs: ServerConfigs,
): string {
  const candidates = hostsOf(postmaster);
  if (configs.host !== undefined && candidates.includes(configs.host)) return configs.host;
  const allowed = candidates.find((host) => targets.refusal(host) === undefined);
  if (allowed === undefined)
    throw new TerminalError(
      `the server in data_directory "${configs.data_directory}" listens at ${
        candidates.length ? candidates.map((host) => `"${host}"`).join(' and ') : 'no address'
      }, none of them an allowed PostgreSQL target (STEWARD_POSTGRES_TARGETS)`,
    );
  return allowed;
}

/** The system error's code, on the error or on the one `classify` wrapped. */
function errorCode(err: unknown): unknown {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  return e?.code ?? e?.cause?.code;
}
