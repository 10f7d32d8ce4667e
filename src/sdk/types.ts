/**
 * The module contract. A module implements one kind: its schemas, its actions,
 * a pure `plan` and a side-effecting `sync`. This file imports nothing from the
 * rest of Steward, so a module author depends on the SDK alone.
 */

/** A JSON Schema (draft-07 as understood by ajv 8). `"writeOnly": true` marks a secret. */
export type JSONSchema = Record<string, unknown>;

/** The three statuses of a resource (docs/design.md §4). */
export type ResourceStatus = 'PENDING' | 'COMPLETED' | 'ERROR';

/** Bookkeeping of the sync loop, as published in `state.sync`. */
export interface SyncState {
  /** Failed sync calls in a row for the current operation; reset by a successful step. */
  attempts: number;
  last_error: string | null;
  next_sync_at: string | null;
  last_synced_at: string | null;
  /** The dependency names this resource waits on, when it waits. */
  waiting_on?: string[];
}

/**
 * The resource document, exactly as the API returns it (docs/design.md §3), except that a
 * module sees secrets (`writeOnly` configs and outputs) that the API never returns.
 *
 * @example
 * { urn: 'orn:steward:file:demo:motd', kind: 'file', project: 'demo', name: 'motd',
 *   labels: {}, version: 1, spec: { configs: { path: 'motd', content: 'hi' }, dependencies: {} },
 *   state: { status: 'PENDING', action: 'create', output: {}, data: { pending: ['write'] }, ... } }
 */
export interface Resource {
  urn: string;
  kind: string;
  project: string;
  name: string;
  labels: Record<string, string>;
  version: number;
  created_at: string;
  updated_at: string;
  created_by: string;
  updated_by: string;
  spec: {
    configs: Record<string, unknown>;
    /** dependency name → URN of the resource it depends on */
    dependencies: Record<string, string>;
  };
  state: {
    status: ResourceStatus;
    /** The action being (or last) carried out: create, update, delete or a module action. */
    action: string;
    operation_id: string;
    output: Record<string, unknown>;
    /** The module's private bookkeeping, e.g. `{ pending: ['write', 'chmod'] }`. */
    data: unknown;
    /** The version whose sync last finished, or null before the first one. */
    observed_version: number | null;
    sync: SyncState;
  };
}

/** A dependency as handed to `plan` and `sync`: its URN, kind and published output (secrets included). */
export interface ResolvedDependency {
  urn: string;
  kind: string;
  output: Record<string, unknown>;
}

/** What `plan` is given. Everything in it is read-only: `plan` MUST NOT mutate it. */
export interface PlanInput {
  /** create | update | delete | a module action */
  action: string;
  /** The action's params, already validated against its `paramsSchema` (`{}` when none). */
  params: unknown;
  /** The resource as stored; null on create. */
  current: Resource | null;
  /** `current` with the request's configs, labels and dependencies applied. */
  desired: Resource;
  dependencies: Record<string, ResolvedDependency>;
  /** The only clock `plan` may read. */
  now: Date;
}

/** What `plan` returns. Every member is optional. */
export interface PlanResult {
  /** The configs to store (default: `desired.spec.configs`). */
  configs?: Record<string, unknown>;
  /** The labels to store (default: `desired.labels`). */
  labels?: Record<string, string>;
  /** Module bookkeeping for `sync`, e.g. `{ pending: ['write', 'chmod'] }` (default: kept). */
  data?: unknown;
  /** Replaces `state.output` at once (default: kept). */
  output?: Record<string, unknown>;
}

/** What `sync` is given. */
export interface SyncInput {
  resource: Resource;
  dependencies: Record<string, ResolvedDependency>;
}

/** A structured logger; messages are constant phrases, data goes in fields. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** What the core hands each `sync` call besides its input. */
export interface SyncContext {
  /** Aborted when the sync times out, the lease is lost, the operation is superseded or Steward shuts down. */
  signal: AbortSignal;
  /** Already carries `urn` and `operationId`. */
  log: Logger;
  now(): Date;
}

/** The outcome of one `sync` call, returned as data. */
export interface SyncResult {
  /** PENDING: call `sync` again; COMPLETED: the backend matches the spec. */
  status: 'PENDING' | 'COMPLETED';
  /** Replaces `state.output` when given. */
  output?: Record<string, unknown>;
  /** Replaces `state.data` when given. */
  data?: unknown;
  /** Wait this long before the next call. A wait, not a failure. */
  requeueAfterMs?: number;
}

/** One chunk of a module's logs (used by modules that have logs). */
export interface LogChunk {
  ts: string;
  stream?: string;
  line: string;
}

/** What `logs` is given besides its input. */
export interface LogContext {
  signal: AbortSignal;
  follow: boolean;
  tail?: number;
}

/** An action a module accepts. `create`, `update` and `delete` are required. */
export interface ActionDefinition {
  description?: string;
  /** Validates the action's params; absent means the action takes none. */
  paramsSchema?: JSONSchema;
}

/** A dependency a module declares: the name used in `spec.dependencies` maps to a kind. */
export interface DependencyDefinition {
  kind: string;
  optional?: boolean;
}

/**
 * What `claimKey` and `usage` are given: the resource's project and its spec as it
 * would be stored (configs with defaults filled in, secrets present).
 */
export interface SpecInput {
  project: string;
  configs: Record<string, unknown>;
  /** dependency name → URN */
  dependencies: Record<string, string>;
}

/**
 * A module: one kind of resource.
 *
 * Contract (MUST/SHOULD):
 * - `kind` MUST match `^[a-z][a-z0-9_]{1,62}$` and be unique among loaded modules.
 * - `actions` MUST include `create`, `update` and `delete`.
 * - `plan` MUST be pure and deterministic: no I/O, no clock but `input.now`, no
 *   randomness, no mutation of its input. It throws `ValidationError` to reject a request.
 *   It SHOULD return its result directly. It MAY return a promise only when the pure
 *   function is computed elsewhere (the `http` modules ask an endpoint that MUST itself
 *   be pure); Steward awaits it outside any transaction.
 * - `sync` does the side effects. Each step MUST be idempotent: after a crash the same
 *   step may run again. It SHOULD do one step per call and return `PENDING` with the
 *   remaining steps in `data`, so progress is visible and a crash repeats little.
 *   It SHOULD honour `ctx.signal`. Throwing `TerminalError` puts the resource in ERROR at
 *   once; any other throw is retried with backoff.
 * - For `delete`, `sync` returns `COMPLETED` once the backend is torn down; the core
 *   then removes the resource.
 */
export interface ModuleDefinition {
  kind: string;
  description: string;
  /** Validates `spec.configs`. */
  configSchema: JSONSchema;
  /** Describes `state.output`; `writeOnly` fields are secrets. */
  outputSchema?: JSONSchema;
  dependencies?: Record<string, DependencyDefinition>;
  actions: Record<string, ActionDefinition>;
  /** Re-sync COMPLETED resources this often, to repair drift. */
  resyncIntervalMs?: number;
  /**
   * Which fields each secret config is sent to or used with. A PATCH or update that
   * changes a bound field without sending the secret again is refused (400 naming
   * both), so a kept secret never follows the resource to a place its writer did not
   * choose. Keys MUST be top-level `writeOnly` configs; values name top-level configs
   * (`host`) or dependencies (`dependencies.server`).
   *
   * @example
   * // postgres_server: the admin password goes to this host, port and user only
   * secretBindings: { admin_password: ['host', 'port', 'admin_user', 'sslmode'] }
   */
  secretBindings?: Record<string, readonly string[]>;
  /**
   * The backend object a resource manages, as a key unique within the kind (a file's
   * project and path, a database's server and name), or undefined when it names none.
   * Two resources never hold one key: a create or update onto a key another resource
   * holds is 409, and the key is free again once the holder is deleted. MUST be pure.
   * Computed when a create, update or module action is accepted (a delete keeps the
   * key until the resource is gone); the key moves with an update that changes it.
   * It SHOULD be normalised so that two spellings of one object give one key
   * (`a` and `./a`). At most 2048 characters.
   *
   * The key is stored in plain text beside the resource and a conflicting caller's
   * error names it: it MUST NOT include a secret config (a `writeOnly` value) or
   * anything derived from one.
   *
   * @example
   * claimKey: ({ project, configs }) => `${project}/${path.posix.normalize(String(configs.path))}`
   */
  claimKey?(input: SpecInput): string | undefined;
  /**
   * What one resource consumes of the operator's quotas, by quota name (built in:
   * `processes`, the programs it keeps running). Steward refuses a create or update
   * that would take a project or the whole Steward past a quota. MUST be pure.
   *
   * @example
   * usage: ({ configs }) => ({ processes: Number(configs.replicas ?? 1) })
   */
  usage?(input: SpecInput): Record<string, number>;
  plan(input: PlanInput): PlanResult | Promise<PlanResult>;
  sync(input: SyncInput, ctx: SyncContext): Promise<SyncResult>;
  logs?(input: SyncInput, ctx: LogContext): AsyncIterable<LogChunk>;
}
