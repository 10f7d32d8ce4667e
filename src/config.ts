import { readFileSync } from 'node:fs';

import {
  absoluteDirList,
  autoOrBoolean,
  boolean,
  commaList,
  envAllowList,
  integer,
  number,
  oneOf,
  type Parser,
  pathList,
  postgresDataDirList,
  postgresTargetList,
  secretKey,
  secretKeyList,
  share,
  text,
  webhookAllowList,
} from './config-parsers.js';
import { MAX_DEADLINE_MS } from './core/requests/deadlines.js';

/**
 * The one place that reads the environment. Every setting has a default, every
 * bad value is reported (all of them at once), and the result is frozen.
 * The configuration table in README.md lists the same settings.
 */
export interface Config {
  /** STEWARD_PORT @default 8080 */
  port: number;
  /** STEWARD_HOST @default 127.0.0.1 (set 0.0.0.0 to listen beyond this machine, as the container does) */
  host: string;
  /** STEWARD_DB: a SQLite file path, or a postgres:// URL. @default ./data/steward.db */
  db: string;
  /** STEWARD_DB_BUSY_TIMEOUT_MS: SQLite's wait for another process's write lock. @default 5000 */
  dbBusyTimeoutMs: number;
  /** STEWARD_DB_POOL_SIZE: PostgreSQL connections per process. @default 10 */
  dbPoolSize: number;
  /** STEWARD_MODULE_PATHS: ':'-separated directories of user modules. @default none */
  modulePaths: string[];
  /** STEWARD_LOG_LEVEL: error | warn | info | debug. @default info */
  logLevel: 'error' | 'warn' | 'info' | 'debug';
  /** STEWARD_WORKER: run the sync worker in this process. @default true */
  worker: boolean;
  /**
   * STEWARD_WORKER_PROCESS: `serve` runs its sync worker in a second process (auto: when the machine has two or more
   * cores), so the API and the worker each have a core. @default auto
   */
  workerProcess: 'auto' | boolean;
  /** STEWARD_WORKER_CONCURRENCY @default 8 */
  workerConcurrency: number;
  /** STEWARD_LEASE_MS @default 15000 */
  leaseMs: number;
  /** STEWARD_POLL_INTERVAL_MS @default 1000 */
  pollIntervalMs: number;
  /** STEWARD_SYNC_TIMEOUT_MS @default 60000 */
  syncTimeoutMs: number;
  /** STEWARD_MAX_ATTEMPTS @default 5 */
  maxAttempts: number;
  /** STEWARD_BACKOFF_BASE_MS @default 1000 */
  backoffBaseMs: number;
  /** STEWARD_BACKOFF_FACTOR @default 2 */
  backoffFactor: number;
  /** STEWARD_BACKOFF_MAX_MS @default 300000 */
  backoffMaxMs: number;
  /** STEWARD_DEPENDENCY_POLL_MS @default 5000 */
  dependencyPollMs: number;
  /** STEWARD_SHUTDOWN_GRACE_MS @default 10000 */
  shutdownGraceMs: number;
  /** STEWARD_MAX_STATE_BYTES: largest output + data a sync may return. @default 1048576 */
  maxStateBytes: number;
  /** STEWARD_MAX_BODY_BYTES: largest request body; a larger one answers 413. @default 1048576 */
  maxBodyBytes: number;
  /** STEWARD_MAX_LABELS: most labels one resource may have. @default 64 */
  maxLabels: number;
  /** STEWARD_MAX_PARAMS_BYTES: largest params of one action, as UTF-8 bytes of JSON. @default 65536 */
  maxParamsBytes: number;
  /** STEWARD_FILE_ROOT: where the built-in `file` module may write. @default ./data/files */
  fileRoot: string;
  /**
   * STEWARD_ALLOWED_COMMANDS: ','-separated executables the `process` and `job` modules may run
   * (absolute paths, or bare names looked up on PATH). @default none (such resources are refused)
   */
  allowedCommands: string[];
  /** STEWARD_RUN_DIR: where `process` and `job` keep pid records and log files. @default ./data/run */
  runDir: string;
  /** STEWARD_LOG_FILE_MAX_BYTES: a module log file is rotated past this size (one old file kept). @default 5242880 */
  logFileMaxBytes: number;
  /** STEWARD_HTTP_MODULES: ','-separated base URLs of modules served over HTTP. @default none */
  httpModules: string[];
  /** STEWARD_HTTP_MODULE_TIMEOUT_MS: timeout of one call to an HTTP module. @default 10000 */
  httpModuleTimeoutMs: number;
  /** STEWARD_EVENTS_HEARTBEAT_MS: a `: heartbeat` comment on every open watch this often. @default 15000 */
  eventsHeartbeatMs: number;
  /** STEWARD_EVENT_RETENTION: newest events kept; older ones are pruned by the worker process. @default 100000 */
  eventRetention: number;
  /** STEWARD_SCHEDULE_GRACE_MS: how long a due schedule waits for its PENDING resource before the run is `missed`. @default 3600000 */
  scheduleGraceMs: number;
  /**
   * STEWARD_TOKENS_FILE: the API tokens (names, roles, projects, SHA-256 hashes), re-read when it changes.
   * @default none: open mode, every caller is `anonymous` with admin on every project (docs/security.md)
   */
  tokensFile: string | undefined;
  /** STEWARD_RATE_LIMIT_PER_SECOND: requests per second each token may sustain; 0 turns the limit off. @default 50 */
  rateLimitPerSecond: number;
  /** STEWARD_RATE_LIMIT_BURST: requests a token may send at once; 0 turns the limit off. @default 100 */
  rateLimitBurst: number;
  /**
   * STEWARD_SECRET_KEY: 32 random bytes in base64; writeOnly configs and outputs are sealed with it at rest
   * (AES-256-GCM, docs/security.md). @default none: secrets are stored as plaintext, with a warning at start
   */
  secretKey: string | undefined;
  /** STEWARD_SECRET_KEYS_PREVIOUS: ','-separated older keys, still accepted to open sealed values (key rotation). @default none */
  secretKeysPrevious: string[];
  /**
   * STEWARD_ALLOWED_ENV: ','-separated names a `process` or `job` resource may set in `env` and `secret_env`:
   * `NAME` for every allowed command, `COMMAND:NAME` for that command only (as written in STEWARD_ALLOWED_COMMANDS),
   * a trailing `*` for a prefix (`APP_*`). Any other name is refused. @default none (a resource sets no variable)
   */
  allowedEnv: string[];
  /**
   * STEWARD_PROCESS_PID_DIRS: ','-separated absolute directories a `process` resource's `pid_file` may be in
   * (a running process Steward did not start is imported by its pid file). @default none: `pid_file` is refused
   */
  processPidDirs: string[];
  /**
   * STEWARD_POSTGRES_TARGETS: ','-separated host names, IP addresses, CIDRs and Unix-socket directories that
   * postgres_server may connect to; a name not listed must resolve into an address entry, and a socket
   * directory must be listed exactly. @default 127.0.0.0/8,::1,localhost (loopback only)
   */
  postgresTargets: string[];
  /**
   * STEWARD_POSTGRES_DATA_DIRS: ','-separated absolute directories under which a postgres_server's
   * `data_directory` may be (its postmaster.pid is read there, symlinks resolved). @default none (refused)
   */
  postgresDataDirs: string[];
  /** STEWARD_QUOTA_PROJECT_RESOURCES: most resources one project may hold; 0 = no quota. @default 10000 */
  quotaProjectResources: number;
  /** STEWARD_QUOTA_RESOURCES: most resources in all projects together; 0 = no quota. @default 1000000 */
  quotaResources: number;
  /** STEWARD_QUOTA_PROJECT_BYTES: most stored spec bytes (configs, dependencies, labels as JSON) of one project; 0 = no quota. @default 268435456 (256 MiB) */
  quotaProjectBytes: number;
  /** STEWARD_QUOTA_BYTES: most stored spec bytes in all projects together; 0 = no quota. @default 4294967296 (4 GiB) */
  quotaBytes: number;
  /** STEWARD_QUOTA_PROJECT_PROCESSES: most programs the resources of one project may keep running (modules' `usage`); 0 = no quota. @default 64 */
  quotaProjectProcesses: number;
  /** STEWARD_QUOTA_PROCESSES: most programs all resources together may keep running; 0 = no quota. @default 256 */
  quotaProcesses: number;
  /** STEWARD_REVISION_RETENTION: newest revisions kept per resource (older ones are deleted when one is added); 0 keeps all. @default 100 */
  revisionRetention: number;
  /**
   * STEWARD_HEADERS_TIMEOUT_MS: a connection must send a whole request head this soon after it opens (or after its
   * previous answer), else it is answered 400 and closed. @default 10000
   */
  headersTimeoutMs: number;
  /** STEWARD_REQUEST_TIMEOUT_MS: a request, head and body, must arrive this soon, else 400 and closed. @default 60000 */
  requestTimeoutMs: number;
  /**
   * STEWARD_MAX_CONNECTIONS: open HTTP connections at once; more are closed as they arrive. It is never more than the
   * soft open-files limit (ulimit -n) less a reserve of 256 descriptors for the worker, modules and the database.
   * @default 0: the open-files limit less the reserve (1024 less the reserve where the limit cannot be read)
   */
  maxConnections: number;
  /** STEWARD_MAX_PAGE_BYTES: a list page ends before the item that would take its JSON past this (at least one item). @default 4194304 */
  maxPageBytes: number;

  // Fair claims across projects (issue 11).
  /**
   * STEWARD_PROJECT_SLOT_SHARE: the share of a worker's slots (STEWARD_WORKER_CONCURRENCY) one project may
   * hold while another project has work due; at least one slot. A project alone uses every slot. 1 turns it off.
   * @default 0.5
   */
  projectSlotShare: number;
  /**
   * STEWARD_DELETED_HISTORY_RETENTION: the revisions and operations of at most this many deleted resources (URNs with no
   * resource row) are kept, the latest deleted first; the worker process prunes the rest. 0 keeps all. @default 10000
   */
  deletedHistoryRetention: number;
  /** STEWARD_AUDIT_RETENTION_DAYS: days an audit entry is kept; the worker process prunes older ones. 0 keeps all. @default 90 */
  auditRetentionDays: number;
  /**
   * STEWARD_OPERATION_DEADLINE_MS: how long an operation of a resource whose `spec.policy.deadline` is absent has to
   * reach COMPLETED from its acceptance, else ERROR "deadline exceeded" (at most 365 days). @default none
   */
  operationDeadlineMs: number | undefined;
  // Webhooks (issue 16, docs/webhooks.md).
  /**
   * STEWARD_WEBHOOK_ALLOW: ','-separated host names, IP addresses and CIDRs a webhook may send to although
   * they are loopback, link-local, private or metadata addresses. @default none (such targets are refused)
   */
  webhookAllow: string[];
  /** STEWARD_WEBHOOK_TIMEOUT_MS: how long one delivery waits for the receiver's answer. @default 10000 */
  webhookTimeoutMs: number;
  /** STEWARD_WEBHOOK_RETRY_BASE_MS: the wait before a failed delivery's first retry; doubled each time (jittered, at most 1 h). @default 10000 */
  webhookRetryBaseMs: number;
  /** STEWARD_WEBHOOK_GIVE_UP_MS: a delivery still failing this long after its event gives up, and its webhook is disabled. @default 86400000 */
  webhookGiveUpMs: number;
  /** STEWARD_WEBHOOK_DELIVERY_RETENTION_DAYS: days a finished (delivered or given up) delivery is kept; the worker process prunes older ones. 0 keeps all. @default 7 */
  webhookDeliveryRetentionDays: number;
}

/** Each setting: its variable, its parser and its default. */
const SETTINGS: { [K in keyof Config]: [variable: string, parse: Parser, fallback: Config[K]] } = {
  port: ['STEWARD_PORT', integer(0, 65535), 8080],
  host: ['STEWARD_HOST', text, '127.0.0.1'],
  db: ['STEWARD_DB', text, './data/steward.db'],
  dbBusyTimeoutMs: ['STEWARD_DB_BUSY_TIMEOUT_MS', integer(0), 5000],
  dbPoolSize: ['STEWARD_DB_POOL_SIZE', integer(1, 1000), 10],
  modulePaths: ['STEWARD_MODULE_PATHS', pathList, []],
  logLevel: ['STEWARD_LOG_LEVEL', oneOf('error', 'warn', 'info', 'debug'), 'info'],
  worker: ['STEWARD_WORKER', boolean, true],
  workerProcess: ['STEWARD_WORKER_PROCESS', autoOrBoolean, 'auto'],
  workerConcurrency: ['STEWARD_WORKER_CONCURRENCY', integer(1, 1000), 8],
  leaseMs: ['STEWARD_LEASE_MS', integer(100), 15_000],
  pollIntervalMs: ['STEWARD_POLL_INTERVAL_MS', integer(10), 1000],
  syncTimeoutMs: ['STEWARD_SYNC_TIMEOUT_MS', integer(10), 60_000],
  maxAttempts: ['STEWARD_MAX_ATTEMPTS', integer(1, 1000), 5],
  backoffBaseMs: ['STEWARD_BACKOFF_BASE_MS', integer(0), 1000],
  backoffFactor: ['STEWARD_BACKOFF_FACTOR', number(1), 2],
  backoffMaxMs: ['STEWARD_BACKOFF_MAX_MS', integer(0), 300_000],
  dependencyPollMs: ['STEWARD_DEPENDENCY_POLL_MS', integer(10), 5000],
  shutdownGraceMs: ['STEWARD_SHUTDOWN_GRACE_MS', integer(0), 10_000],
  maxStateBytes: ['STEWARD_MAX_STATE_BYTES', integer(1024), 1024 * 1024],
  maxBodyBytes: ['STEWARD_MAX_BODY_BYTES', integer(1024, 1024 * 1024 * 1024), 1024 * 1024],
  maxLabels: ['STEWARD_MAX_LABELS', integer(0, 10_000), 64],
  maxParamsBytes: ['STEWARD_MAX_PARAMS_BYTES', integer(2, 1024 * 1024 * 1024), 64 * 1024],
  fileRoot: ['STEWARD_FILE_ROOT', text, './data/files'],
  allowedCommands: ['STEWARD_ALLOWED_COMMANDS', commaList, []],
  runDir: ['STEWARD_RUN_DIR', text, './data/run'],
  logFileMaxBytes: ['STEWARD_LOG_FILE_MAX_BYTES', integer(1024), 5 * 1024 * 1024],
  httpModules: ['STEWARD_HTTP_MODULES', commaList, []],
  httpModuleTimeoutMs: ['STEWARD_HTTP_MODULE_TIMEOUT_MS', integer(10), 10_000],
  eventsHeartbeatMs: ['STEWARD_EVENTS_HEARTBEAT_MS', integer(10), 15_000],
  eventRetention: ['STEWARD_EVENT_RETENTION', integer(1), 100_000],
  scheduleGraceMs: ['STEWARD_SCHEDULE_GRACE_MS', integer(0), 3_600_000],
  tokensFile: ['STEWARD_TOKENS_FILE', text, undefined],
  rateLimitPerSecond: ['STEWARD_RATE_LIMIT_PER_SECOND', number(0), 50],
  rateLimitBurst: ['STEWARD_RATE_LIMIT_BURST', integer(0, 1_000_000), 100],
  secretKey: ['STEWARD_SECRET_KEY', secretKey, undefined],
  secretKeysPrevious: ['STEWARD_SECRET_KEYS_PREVIOUS', secretKeyList, []],
  allowedEnv: ['STEWARD_ALLOWED_ENV', envAllowList, []],
  processPidDirs: ['STEWARD_PROCESS_PID_DIRS', absoluteDirList, []],
  postgresTargets: [
    'STEWARD_POSTGRES_TARGETS',
    postgresTargetList,
    ['127.0.0.0/8', '::1', 'localhost'],
  ],
  postgresDataDirs: ['STEWARD_POSTGRES_DATA_DIRS', postgresDataDirList, []],
  quotaProjectResources: ['STEWARD_QUOTA_PROJECT_RESOURCES', integer(0), 10_000],
  quotaResources: ['STEWARD_QUOTA_RESOURCES', integer(0), 1_000_000],
  quotaProjectBytes: ['STEWARD_QUOTA_PROJECT_BYTES', integer(0), 256 * 1024 * 1024],
  quotaBytes: ['STEWARD_QUOTA_BYTES', integer(0), 4 * 1024 * 1024 * 1024],
  quotaProjectProcesses: ['STEWARD_QUOTA_PROJECT_PROCESSES', integer(0), 64],
  quotaProcesses: ['STEWARD_QUOTA_PROCESSES', integer(0), 256],
  revisionRetention: ['STEWARD_REVISION_RETENTION', integer(0), 100],
  headersTimeoutMs: ['STEWARD_HEADERS_TIMEOUT_MS', integer(100, 3_600_000), 10_000],
  requestTimeoutMs: ['STEWARD_REQUEST_TIMEOUT_MS', integer(100, 3_600_000), 60_000],
  maxConnections: ['STEWARD_MAX_CONNECTIONS', integer(0, 10_000_000), 0],
  maxPageBytes: ['STEWARD_MAX_PAGE_BYTES', integer(1024, 1024 * 1024 * 1024), 4 * 1024 * 1024],
  projectSlotShare: ['STEWARD_PROJECT_SLOT_SHARE', share, 0.5],
  deletedHistoryRetention: ['STEWARD_DELETED_HISTORY_RETENTION', integer(0), 10_000],
  auditRetentionDays: ['STEWARD_AUDIT_RETENTION_DAYS', integer(0, 36_500), 90],
  operationDeadlineMs: ['STEWARD_OPERATION_DEADLINE_MS', integer(1, MAX_DEADLINE_MS), undefined],
  webhookAllow: ['STEWARD_WEBHOOK_ALLOW', webhookAllowList, []],
  webhookTimeoutMs: ['STEWARD_WEBHOOK_TIMEOUT_MS', integer(10, 3_600_000), 10_000],
  webhookRetryBaseMs: ['STEWARD_WEBHOOK_RETRY_BASE_MS', integer(1, 3_600_000), 10_000],
  webhookGiveUpMs: ['STEWARD_WEBHOOK_GIVE_UP_MS', integer(1), 86_400_000],
  webhookDeliveryRetentionDays: ['STEWARD_WEBHOOK_DELIVERY_RETENTION_DAYS', integer(0, 36_500), 7],
};

/** Settings whose values an error message must not repeat. */
const SECRET_VARIABLES = new Set(['STEWARD_SECRET_KEY', 'STEWARD_SECRET_KEYS_PREVIOUS']);

/** Each setting's variable and default, in the order of the table in README.md (a test holds the two together). */
export function describeSettings(): Array<{ variable: string; fallback: unknown }> {
  return Object.values(SETTINGS).map(([variable, , fallback]) => ({ variable, fallback }));
}

/**
 * Resolves the configuration from the environment, over an optional JSON file
 * named by STEWARD_CONFIG_FILE (keys are the variable names). Throws one error
 * listing every bad variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const fromFile = env.STEWARD_CONFIG_FILE ? readConfigFile(env.STEWARD_CONFIG_FILE) : {};
  const problems: string[] = [];
  const resolved: Record<string, unknown> = {};
  for (const [key, [variable, parse, fallback]] of Object.entries(SETTINGS) as Array<
    [keyof Config, [string, Parser, unknown]]
  >) {
    const raw = env[variable] ?? fromFile[variable];
    if (raw === undefined) {
      resolved[key] = fallback;
      continue;
    }
    try {
      resolved[key] = parse(String(raw));
    } catch (err) {
      problems.push(
        `${SECRET_VARIABLES.has(variable) ? variable : `${variable}=${JSON.stringify(raw)}`} ${(err as Error).message}`,
      );
    }
  }
  if (problems.length) throw new Error(`invalid configuration:\n  ${problems.join('\n  ')}`);
  return Object.freeze(resolved as unknown as Config);
}

function readConfigFile(file: string): Record<string, string> {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('must hold a JSON object');
    return parsed as Record<string, string>;
  } catch (err) {
    throw new Error(
      `invalid configuration: STEWARD_CONFIG_FILE ${file}: ${(err as Error).message}`,
    );
  }
}
