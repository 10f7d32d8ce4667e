/**
 * The module contract. A module implements one kind: its schemas, its actions,
 * a pure `plan` and a side-effecting `sync`. This file imports nothing from the
 * rest of Steward, so a module author depends on the SDK alone.
 *
 * Three type parameters run through the contract, each defaulting to "anything",
 * which is how Steward's core sees every module:
 * - `Configs`: the shape of `spec.configs`, which `configSchema` guarantees;
 * - `Output`: the shape of `state.output`, which `outputSchema` describes;
 * - `Data`: the module's own bookkeeping in `state.data`.
 * `defineModule` takes them once and checks every member against them.
 */

/** A JSON Schema (draft-07 as understood by ajv 8). `"writeOnly": true` marks a secret. */
export type JSONSchema = Record<string, unknown>;

/** The three statuses of a resource (docs/design.md §4). */
export type ResourceStatus = 'PENDING' | 'COMPLETED' | 'ERROR';

/** Bookkeeping of the sync loop, as published in `state.sync`. */
export interface SyncState {
  /** Failed sync calls in a row for the current operation; reset by a successful step. */
  attempts: number;
  /** The message of the last failed sync call, or null since the last successful one. */
  last_error: string | null;
  /** When the sync loop calls `sync` next (ISO 8601), or null when nothing is due. */
  next_sync_at: string | null;
  /** When a `sync` call last returned (ISO 8601), or null before the first one. */
  last_synced_at: string | null;
  /** The dependency names this resource waits on, when it waits. */
  waiting_on?: string[];
  /**
   * While PENDING with a deadline (`spec.policy.deadline` or STEWARD_OPERATION_DEADLINE_MS): when the
   * operation must be COMPLETED by (ISO 8601), else the resource goes to ERROR "deadline exceeded".
   */
  deadline_at?: string;
}

/**
 * How Steward treats a resource's backend object (docs/design.md §11), in `spec.policy`.
 * Defaults: `{ mode: 'manage', on_delete: 'delete' }`.
 */
export interface ResourcePolicy {
  /** `manage`: `sync` makes the backend match the spec. `observe`: Steward only reads it (`observe`), never calls `sync`. */
  mode: 'manage' | 'observe';
  /** `delete`: a delete tears the backend object down. `orphan`: the record goes, the object stays. */
  on_delete: 'delete' | 'orphan';
  /**
   * How long each operation has to reach COMPLETED from when it is accepted: an ISO 8601 duration
   * (`PT1H`, `P1DT12H`, `PT90S`; weeks, days, hours, minutes, seconds) or a number of ms. Absent: the
   * operator's STEWARD_OPERATION_DEADLINE_MS, if set, else none.
   */
  deadline?: string | number;
}

/** One config field whose backend value differs from the spec. */
export interface DriftField {
  /** The value in `spec.configs` (absent for a secret). */
  desired?: unknown;
  /** The value `observe` read (absent for a secret). */
  actual?: unknown;
  /** Set for a secret field: the two differ, and neither is shown. */
  secret?: true;
}

/** What the last look at the backend found, in `state.drift` (a refresh, or a drift re-sync). */
export interface Drift {
  /** When the backend was last read or re-synced (ISO 8601). */
  checked_at: string;
  /** False when `observe` found no backend object. */
  exists: boolean;
  /** JSON pointer of each differing config (`/mode`) → desired and actual; empty when none. */
  fields: Record<string, DriftField>;
  /** Why the last check failed, or null when it worked; `fields` are then from the last check that did. */
  error: string | null;
}

/**
 * The resource document, exactly as the API returns it (docs/design.md §3), except that a
 * module sees secrets (`writeOnly` configs and outputs) that the API never returns.
 *
 * @typeParam Configs - the shape of `spec.configs` (what `configSchema` accepts, defaults filled in)
 * @typeParam Output - the shape of `state.output` (what `sync` publishes)
 * @typeParam Data - the module's bookkeeping in `state.data`
 *
 * @example
 * { urn: 'orn:steward:file:demo:motd', kind: 'file', project: 'demo', name: 'motd',
 *   labels: {}, version: 1, spec: { configs: { path: 'motd', content: 'hi' }, dependencies: {} },
 *   state: { status: 'PENDING', action: 'create', output: {}, data: { pending: ['write'] }, ... } }
 */
export interface Resource<
  Configs extends object = Record<string, unknown>,
  Output extends object = Record<string, unknown>,
  Data = unknown,
> {
  /** `orn:steward:{kind}:{project}:{name}`: the resource's one identifier. */
  urn: string;
  /** The kind, which names the module that manages the resource. */
  kind: string;
  /** The project the resource belongs to; dependencies stay within one project. */
  project: string;
  /** The name, unique within the kind and project. */
  name: string;
  /** Free-form labels set by the caller (or by `plan`). */
  labels: Record<string, string>;
  /** Moves up by one whenever spec or labels change. */
  version: number;
  /** When the resource was created (ISO 8601). */
  created_at: string;
  /** When spec, labels or state last changed (ISO 8601). */
  updated_at: string;
  /** Who created the resource (the caller's identity, or `anonymous`). */
  created_by: string;
  /** Who made the last request on it. */
  updated_by: string;
  /** What the caller asked for. */
  spec: {
    /** The configs, valid against `configSchema`, with its defaults filled in. */
    configs: Configs;
    /** dependency name → URN of the resource it depends on */
    dependencies: Record<string, string>;
    /** Manage or only observe the backend, and what a delete does to it. */
    policy: ResourcePolicy;
  };
  /** Where the resource stands. */
  state: {
    /** PENDING while an operation runs, COMPLETED once it converged, ERROR when it failed. */
    status: ResourceStatus;
    /** The action being (or last) carried out: create, update, delete or a module action. */
    action: string;
    /** The operation carrying out `action`; a new request starts a new one. */
    operation_id: string;
    /** What the module published. `{}` until `plan` or `sync` first publishes, hence Partial. */
    output: Partial<Output>;
    /** The module's private bookkeeping, e.g. `{ pending: ['write', 'chmod'] }`; null until set. */
    data: Data | null;
    /** The version whose sync last finished, or null before the first one. */
    observed_version: number | null;
    /** Bookkeeping of the sync loop. */
    sync: SyncState;
    /** True while paused: no sync runs for it, and accepted requests wait (`POST .../resume`). */
    paused: boolean;
    /** What the last refresh or drift re-sync found; null before the first one. */
    drift: Drift | null;
  };
}

/** A dependency as handed to `plan` and `sync`: its URN, kind and published output (secrets included). */
export interface ResolvedDependency {
  /** The dependency's URN, as named in `spec.dependencies`. */
  urn: string;
  /** Its kind, the one the module declared for this dependency name. */
  kind: string;
  /** Its current `state.output`, secrets included. */
  output: Record<string, unknown>;
}

/**
 * What `plan` is given. Everything in it is read-only: `plan` MUST NOT mutate it.
 *
 * @example
 * plan: ({ action, desired }) =>
 *   action === 'delete' ? { data: { pending: ['remove'] } } : { data: { pending: ['write'] } }
 */
export interface PlanInput<
  Configs extends object = Record<string, unknown>,
  Output extends object = Record<string, unknown>,
  Data = unknown,
> {
  /** create | update | delete | a module action */
  action: string;
  /** The action's params, already validated against its `paramsSchema` (`{}` when none). */
  params: unknown;
  /** The resource as stored; null on create. */
  current: Resource<Configs, Output, Data> | null;
  /** `current` with the request's configs, labels and dependencies applied. */
  desired: Resource<Configs, Output, Data>;
  /** dependency name → the dependency, for every name in `desired.spec.dependencies`. */
  dependencies: Record<string, ResolvedDependency>;
  /** The only clock `plan` may read. */
  now: Date;
}

/**
 * What `plan` returns. Every member is optional: `{}` stores the request as it is.
 *
 * @example
 * { configs: { ...desired.spec.configs, mode: '0644' }, data: { pending: ['chmod'] } }
 */
export interface PlanResult<
  Configs extends object = Record<string, unknown>,
  Output extends object = Record<string, unknown>,
  Data = unknown,
> {
  /** The configs to store (default: `desired.spec.configs`); validated against `configSchema` again. */
  configs?: Configs;
  /** The labels to store (default: `desired.labels`). */
  labels?: Record<string, string>;
  /** Module bookkeeping for `sync`, e.g. `{ pending: ['write', 'chmod'] }` (default: kept). */
  data?: Data;
  /** Replaces `state.output` at once (default: kept). */
  output?: Output;
}

/**
 * What `sync` (and `logs`) is given.
 *
 * @example
 * sync: async ({ resource, dependencies }) => ({
 *   status: 'COMPLETED',
 *   output: { host: String(dependencies.server?.output.host) },
 * })
 */
export interface SyncInput<
  Configs extends object = Record<string, unknown>,
  Output extends object = Record<string, unknown>,
  Data = unknown,
> {
  /** The resource, secrets included; `state.action` says what to carry out, `state.data` what is left. */
  resource: Resource<Configs, Output, Data>;
  /** dependency name → the dependency, each COMPLETED (except on delete), with its current output. */
  dependencies: Record<string, ResolvedDependency>;
}

/**
 * A structured logger; messages are constant phrases, data goes in fields.
 *
 * @example
 * ctx.log.info('file written', { path, bytes });
 */
export interface Logger {
  /** Detail for whoever debugs the module (poll ticks, each step). */
  debug(message: string, fields?: Record<string, unknown>): void;
  /** Lifecycle and transitions (a process started, a run ended). */
  info(message: string, fields?: Record<string, unknown>): void;
  /** Trouble the module works around by itself. */
  warn(message: string, fields?: Record<string, unknown>): void;
  /** What a person must look at. */
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * What the core hands each `sync` call besides its input.
 *
 * @example
 * await writeFile(path, text, { signal: ctx.signal });
 * ctx.log.debug('step done', { step, at: ctx.now().toISOString() });
 */
export interface SyncContext {
  /** Aborted when the sync times out, the lease is lost, the operation is superseded or Steward shuts down. */
  signal: AbortSignal;
  /** Already carries `urn` and `operationId`. */
  log: Logger;
  /** The clock to use for anything that is compared with `state` times (a test moves it on). */
  now(): Date;
}

/**
 * The outcome of one `sync` call, returned as data.
 *
 * @example
 * // one step done, two left; call again in a second
 * { status: 'PENDING', data: { pending: ['chmod', 'check'] }, requeueAfterMs: 1000 }
 */
export interface SyncResult<Output extends object = Record<string, unknown>, Data = unknown> {
  /** PENDING: call `sync` again; COMPLETED: the backend matches the spec. */
  status: 'PENDING' | 'COMPLETED';
  /** Replaces `state.output` when given; checked against `outputSchema`. */
  output?: Output;
  /** Replaces `state.data` when given (null is a value). */
  data?: Data;
  /** Wait this long before the next call, in ms: from 0 to 365 days, rounded up to a whole ms. A wait, not a failure. */
  requeueAfterMs?: number;
}

/**
 * What `observe` read of the backend object. It changes nothing to find this out.
 *
 * @example
 * { exists: true, configs: { mode: '0644' }, output: { sha256: 'ab12…', size: 3 } }
 */
export interface ObserveResult<
  Configs extends object = Record<string, unknown>,
  Output extends object = Record<string, unknown>,
  Data = unknown,
> {
  /** False when there is no such object (an import then fails with "nothing to import"). */
  exists: boolean;
  /**
   * The configs as the backend has them, for the fields the module can read. An import fills
   * in what the request left out; a refresh compares each given field with `spec.configs`
   * (a field left out is not compared, so a default the backend does not record is not drift).
   */
  configs?: Partial<Configs>;
  /** The output, as `sync` would publish it; replaces `state.output`. */
  output?: Output;
  /**
   * Bookkeeping an import keeps, e.g. the marker that says this resource now holds the
   * object (so later updates may change it); ignored by a refresh.
   */
  data?: Data;
}

/**
 * One chunk of a module's logs (used by modules that have logs).
 *
 * @example
 * { ts: '2026-01-01T00:00:00.000Z', stream: 'stdout', line: 'listening on :8080' }
 */
export interface LogChunk {
  /** When the line was written, or as near as the module knows (ISO 8601). */
  ts: string;
  /** Which stream the line came from (`stdout`, `stderr`, `replica-0`…); absent when there is one. */
  stream?: string;
  /** The line, without its newline. */
  line: string;
}

/** What `logs` is given besides its input. */
export interface LogContext {
  /** Aborted when the reader goes away: stop reading and return. */
  signal: AbortSignal;
  /** Keep yielding new lines as they are written, until `signal` aborts (or the source ends). */
  follow: boolean;
  /** Start with only the last `tail` lines of what exists; all of them when absent. */
  tail?: number;
}

/**
 * An action a module accepts. `create`, `update` and `delete` are required.
 *
 * @example
 * scale: {
 *   description: 'Set configs.replicas.',
 *   paramsSchema: { type: 'object', required: ['replicas'], properties: { replicas: { type: 'integer' } } },
 * }
 */
export interface ActionDefinition {
  /** One sentence, published by `GET /modules/{kind}`. */
  description?: string;
  /** Validates the action's params; absent means the action takes any params object. */
  paramsSchema?: JSONSchema;
}

/**
 * A dependency a module declares: the name used in `spec.dependencies` maps to a kind.
 *
 * @example
 * dependencies: { server: { kind: 'postgres_server' } }
 */
export interface DependencyDefinition {
  /** The kind the named dependency must be. */
  kind: string;
  /** When true, a request may leave the dependency out. @default false */
  optional?: boolean;
}

/**
 * What `claimKey` and `usage` are given: the resource's project and its spec as it
 * would be stored (configs with defaults filled in, secrets present).
 *
 * @example
 * { project: 'demo', configs: { path: 'motd', content: 'hi' }, dependencies: {} }
 */
export interface SpecInput<Configs extends object = Record<string, unknown>> {
  /** The resource's project. */
  project: string;
  /** The configs as they will be stored. */
  configs: Configs;
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
 *
 * The type parameters are the module's promise about its own documents: `configSchema`
 * MUST only accept configs of type `Configs`, and `sync` publishes `Output` and keeps
 * `Data`. Without them (`ModuleDefinition`) a module is "any module", as the core holds it.
 * The function members are methods, so TypeScript compares their parameters both ways.
 *
 * @example
 * type Configs = { to: string };
 * type Output = { text: string };
 * export default defineModule<Configs, Output>({
 *   kind: 'hello',
 *   description: 'Publishes a greeting.',
 *   configSchema: { type: 'object', required: ['to'], properties: { to: { type: 'string' } } },
 *   actions: { create: {}, update: {}, delete: {} },
 *   plan: () => ({}),
 *   sync: async ({ resource }) => ({ status: 'COMPLETED', output: { text: `hello ${resource.spec.configs.to}` } }),
 * });
 */
export interface ModuleDefinition<
  Configs extends object = Record<string, unknown>,
  Output extends object = Record<string, unknown>,
  Data = unknown,
> {
  /** The kind this module serves; part of every URN, `orn:steward:{kind}:{project}:{name}`. */
  kind: string;
  /** One or two sentences, published by `GET /modules/{kind}`. */
  description: string;
  /** Validates `spec.configs`; its defaults are filled in; `writeOnly` fields are secrets. */
  configSchema: JSONSchema;
  /** Describes `state.output`; every output `sync` returns is checked; `writeOnly` fields are secrets. */
  outputSchema?: JSONSchema;
  /** dependency name → what it must be; `spec.dependencies` may use only these names. */
  dependencies?: Record<string, DependencyDefinition>;
  /** action name → its definition; MUST include `create`, `update` and `delete`. */
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
   * claimKey: ({ project, configs }) => `${project}/${path.posix.normalize(configs.path)}`
   */
  claimKey?(input: SpecInput<Configs>): string | undefined;
  /**
   * What one resource consumes of the operator's quotas, by quota name (built in:
   * `processes`, the programs it keeps running). Steward refuses a create or update
   * that would take a project or the whole Steward past a quota. MUST be pure.
   *
   * @example
   * usage: ({ configs }) => ({ processes: configs.replicas ?? 1 })
   */
  usage?(input: SpecInput<Configs>): Record<string, number>;
  /**
   * Decides what a request stores and which steps `sync` has left. Pure (see above);
   * throws `ValidationError` to refuse the request (400).
   *
   * @example
   * plan: ({ action }) => ({ data: { pending: action === 'delete' ? ['remove'] : ['write'] } })
   */
  plan(
    input: PlanInput<Configs, Output, Data>,
  ): PlanResult<Configs, Output, Data> | Promise<PlanResult<Configs, Output, Data>>;
  /**
   * Takes the next step towards the spec (or, for `delete`, towards nothing) and says
   * whether more remain. Idempotent (see above).
   *
   * @example
   * sync: async ({ resource }, ctx) => {
   *   await writeFile(resource.spec.configs.path, resource.spec.configs.content, { signal: ctx.signal });
   *   return { status: 'COMPLETED', output: { path: resource.spec.configs.path } };
   * }
   */
  sync(
    input: SyncInput<Configs, Output, Data>,
    ctx: SyncContext,
  ): Promise<SyncResult<Output, Data>>;
  /**
   * Reads the backend object the resource names and changes nothing (no writes, no
   * starts, no locks left behind). Optional: it makes a kind importable
   * (`"import": true`), refreshable (`POST .../refresh`, drift) and usable in
   * `observe` mode. It MUST NOT return secrets it cannot compare in `configs`, and MUST
   * tell "not there" (`exists: false`) from "cannot look" (throw).
   *
   * @example
   * observe: async ({ resource }) => {
   *   const text = await readFile(resource.spec.configs.path, 'utf8').catch(() => undefined);
   *   return text === undefined ? { exists: false } : { exists: true, configs: { content: text } };
   * }
   */
  observe?(
    input: SyncInput<Configs, Output, Data>,
    ctx: SyncContext,
  ): Promise<ObserveResult<Configs, Output, Data>>;
  /**
   * The resource's log lines, oldest first, for `GET /resources/{urn}/logs`; following
   * when `ctx.follow`. Optional: for a kind without it, that endpoint answers 400.
   *
   * @example
   * async *logs({ resource }, ctx) { for (const line of await readLines(resource)) yield { ts, line }; }
   */
  logs?(input: SyncInput<Configs, Output, Data>, ctx: LogContext): AsyncIterable<LogChunk>;
}
