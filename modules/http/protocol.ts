import type {
  ActionDefinition,
  DependencyDefinition,
  JSONSchema,
  PlanInput,
  PlanResult,
  ResolvedDependency,
  Resource,
  SyncInput,
  SyncResult,
} from '../../src/sdk/index.js';
import { claimKeyFieldsOf } from './claim-key.js';

/**
 * The wire protocol of an HTTP module (docs/http-modules.md), snake_case JSON,
 * and its one mapping to and from the SDK's camelCase types. Every answer from an
 * endpoint is checked here: a member of the wrong type, or one the protocol does
 * not know (a camelCase `requeueAfterMs`, say), is a contract breach.
 */

/** `GET {endpoint}/module`. Optional members may also be `null`. */
export interface WireDescription {
  kind: string;
  description: string;
  config_schema: JSONSchema;
  output_schema?: JSONSchema | null;
  dependencies?: Record<string, { kind: string; optional?: boolean }> | null;
  actions: Record<string, { description?: string | null; params_schema?: JSONSchema | null }>;
  resync_interval_ms?: number | null;
  /** As `secretBindings`: secret config → the configs and `dependencies.NAME` it is sent to. */
  secret_bindings?: Record<string, string[]> | null;
  /** True when the endpoint serves `POST /observe` (the kind then has `observe`). */
  has_observe?: boolean | null;
  /** The top-level configs whose values name the backend object (the kind's `claimKey`). */
  claim_key?: string[] | null;
}

/** `POST {endpoint}/plan` request. `now` is ISO 8601. */
export interface WirePlanRequest {
  action: string;
  params: unknown;
  current: Resource | null;
  desired: Resource;
  dependencies: Record<string, ResolvedDependency>;
  now: string;
}

/** `POST {endpoint}/plan` answer (200). Every member optional, as in `PlanResult`. */
export interface WirePlanResponse {
  configs?: Record<string, unknown>;
  labels?: Record<string, string>;
  data?: unknown;
  output?: Record<string, unknown>;
}

/** `POST {endpoint}/sync` request. */
export interface WireSyncRequest {
  resource: Resource;
  dependencies: Record<string, ResolvedDependency>;
}

/** `POST {endpoint}/observe` answer (200); the request is a `WireSyncRequest`. */
export interface WireObserveResponse {
  exists: boolean;
  configs?: Record<string, unknown>;
  output?: Record<string, unknown>;
  data?: unknown;
}

/** `POST {endpoint}/sync` answer (200). */
export interface WireSyncResponse {
  status: 'PENDING' | 'COMPLETED';
  output?: Record<string, unknown>;
  data?: unknown;
  requeue_after_ms?: number;
}

/** The description mapped to a definition's static members (plan and sync are added by index.ts). */
export type DescribedModule = {
  kind: string;
  description: string;
  configSchema: JSONSchema;
  outputSchema?: JSONSchema;
  dependencies?: Record<string, DependencyDefinition>;
  actions: Record<string, ActionDefinition>;
  resyncIntervalMs?: number;
  secretBindings?: Record<string, readonly string[]>;
  /** The description's `has_observe`. */
  hasObserve: boolean;
  /** The description's `claim_key`: config fields, in order. */
  claimKeyFields?: readonly string[];
};

/** An answer that breaks the protocol; `where` names the endpoint and call. */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  constructor(where: string, problem: string) {
    super(`${where}: ${problem}`);
  }
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The problem with the first member the protocol does not know, if any. */
function unknownMember(
  what: string,
  value: Record<string, unknown>,
  allowed: readonly string[],
): string | undefined {
  const key = Object.keys(value).find((k) => !allowed.includes(k));
  return key === undefined
    ? undefined
    : `${what} has unknown member "${key}" (allowed: ${allowed.join(', ')}; the protocol is snake_case)`;
}

export function checkMembers(
  where: string,
  what: string,
  value: Record<string, unknown>,
  allowed: readonly string[],
): void {
  const problem = unknownMember(what, value, allowed);
  if (problem) throw new ProtocolError(where, problem);
}

/** Checks a module description and maps it to camelCase. The registry then checks it against the module contract. */
export function describedModuleFromWire(where: string, body: unknown): DescribedModule {
  const fail = (problem: string): never => {
    throw new ProtocolError(where, `bad module description: ${problem}`);
  };
  const checkKnown = (what: string, value: Record<string, unknown>, allowed: readonly string[]) => {
    const problem = unknownMember(what, value, allowed);
    if (problem) fail(problem);
  };
  if (!isObject(body)) return fail('expected a JSON object');
  checkKnown('the module description', body, [
    'kind',
    'description',
    'config_schema',
    'output_schema',
    'dependencies',
    'actions',
    'resync_interval_ms',
    'secret_bindings',
    'has_observe',
    'claim_key',
  ]);
  if (typeof body.kind !== 'string') fail('kind must be a string');
  if (typeof body.description !== 'string') fail('description must be a string');
  if (!isObject(body.config_schema)) fail('config_schema must be a JSON Schema object');
  if (body.output_schema != null && !isObject(body.output_schema))
    fail('output_schema must be a JSON Schema object or null');
  if (body.dependencies != null && !isObject(body.dependencies))
    fail('dependencies must be an object or null');
  if (body.resync_interval_ms != null && typeof body.resync_interval_ms !== 'number')
    fail('resync_interval_ms must be a number or null');
  if (
    body.secret_bindings != null &&
    !(
      isObject(body.secret_bindings) &&
      Object.values(body.secret_bindings).every(
        (v) => Array.isArray(v) && v.every((f) => typeof f === 'string'),
      )
    )
  ) {
    fail('secret_bindings must be an object of arrays of field names, or null');
  }
  if (body.has_observe != null && typeof body.has_observe !== 'boolean')
    fail('has_observe must be a boolean or null');
  const claimKey = claimKeyFieldsOf(body.claim_key, body.config_schema as JSONSchema);
  if (typeof claimKey === 'string') fail(claimKey);
  if (!isObject(body.actions)) return fail('actions must be an object');
  const actions: Record<string, ActionDefinition> = {};
  for (const [name, action] of Object.entries(body.actions)) {
    if (!isObject(action)) return fail(`actions.${name} must be an object`);
    checkKnown(`actions.${name}`, action, ['description', 'params_schema']);
    if (action.description != null && typeof action.description !== 'string')
      fail(`actions.${name}.description must be a string or null`);
    if (action.params_schema != null && !isObject(action.params_schema))
      fail(`actions.${name}.params_schema must be a JSON Schema object or null`);
    actions[name] = {
      ...(action.description != null && { description: action.description as string }),
      ...(action.params_schema != null && { paramsSchema: action.params_schema as JSONSchema }),
    };
  }
  const dependencies: Record<string, DependencyDefinition> = {};
  for (const [name, dep] of Object.entries((body.dependencies ?? {}) as Record<string, unknown>)) {
    if (!isObject(dep)) return fail(`dependencies.${name} must be an object`);
    checkKnown(`dependencies.${name}`, dep, ['kind', 'optional']);
    if (dep.optional !== undefined && typeof dep.optional !== 'boolean')
      fail(`dependencies.${name}.optional must be a boolean`);
    dependencies[name] = {
      kind: dep.kind as string,
      ...(typeof dep.optional === 'boolean' && { optional: dep.optional }),
    };
  }
  return {
    kind: body.kind as string,
    description: body.description as string,
    configSchema: body.config_schema as JSONSchema,
    ...(body.output_schema != null && { outputSchema: body.output_schema as JSONSchema }),
    ...(body.dependencies != null && { dependencies }),
    actions,
    ...(body.resync_interval_ms != null && { resyncIntervalMs: body.resync_interval_ms as number }),
    ...(body.secret_bindings != null && {
      secretBindings: body.secret_bindings as Record<string, string[]>,
    }),
    hasObserve: body.has_observe === true,
    ...(claimKey !== undefined && { claimKeyFields: claimKey as string[] }),
  };
}

/** The plan request. The resource documents are already snake_case (they are the API's documents). */
export function planRequestToWire(input: PlanInput): WirePlanRequest {
  return {
    action: input.action,
    params: input.params,
    current: input.current,
    desired: input.desired,
    dependencies: input.dependencies,
    now: input.now.toISOString(),
  };
}

/** Checks a 200 answer of /plan and maps it to a `PlanResult`. An empty body means `{}`. */
export function planResultFromWire(where: string, body: unknown): PlanResult {
  if (body === undefined || body === null) return {};
  if (!isObject(body)) throw new ProtocolError(where, 'the plan answer must be a JSON object');
  checkMembers(where, 'the plan answer', body, ['configs', 'labels', 'data', 'output']);
  if (body.configs !== undefined && !isObject(body.configs))
    throw new ProtocolError(where, 'configs must be an object');
  if (body.output !== undefined && !isObject(body.output))
    throw new ProtocolError(where, 'output must be an object');
  if (
    body.labels !== undefined &&
    !(isObject(body.labels) && Object.values(body.labels).every((v) => typeof v === 'string'))
  ) {
    throw new ProtocolError(where, 'labels must be an object of strings');
  }
  const result: PlanResult = {};
  if (body.configs !== undefined) result.configs = body.configs as Record<string, unknown>;
  if (body.labels !== undefined) result.labels = body.labels as Record<string, string>;
  if (body.data !== undefined) result.data = body.data;
  if (body.output !== undefined) result.output = body.output as Record<string, unknown>;
  return result;
}

export function syncRequestToWire(input: SyncInput): WireSyncRequest {
  return { resource: input.resource, dependencies: input.dependencies };
}

/** Checks a 200 answer of /sync and maps it to a `SyncResult` (`requeue_after_ms` → `requeueAfterMs`). */
export function syncResultFromWire(where: string, body: unknown): SyncResult {
  if (!isObject(body)) throw new ProtocolError(where, 'the sync answer must be a JSON object');
  checkMembers(where, 'the sync answer', body, ['status', 'output', 'data', 'requeue_after_ms']);
  if (body.status !== 'PENDING' && body.status !== 'COMPLETED') {
    throw new ProtocolError(
      where,
      `status must be "PENDING" or "COMPLETED", got ${JSON.stringify(body.status) ?? 'nothing'}`,
    );
  }
  if (body.output !== undefined && !isObject(body.output))
    throw new ProtocolError(where, 'output must be an object');
  const requeue = body.requeue_after_ms;
  if (
    requeue !== undefined &&
    requeue !== null &&
    !(typeof requeue === 'number' && Number.isFinite(requeue) && requeue >= 0)
  ) {
    throw new ProtocolError(where, 'requeue_after_ms must be a non-negative number');
  }
  const result: SyncResult = { status: body.status };
  if (body.output !== undefined) result.output = body.output as Record<string, unknown>;
  if (body.data !== undefined) result.data = body.data;
  if (typeof requeue === 'number') result.requeueAfterMs = requeue;
  return result;
}

/** The message of an error answer: `{error: {message}}`, `{error: "…"}`, `{message}`, or the text itself (bounded). */
export function errorMessageOf(status: number, text: string): string {
  let message: unknown;
  try {
    const body = JSON.parse(text) as unknown;
    if (isObject(body))
      message = isObject(body.error) ? body.error.message : (body.error ?? body.message);
  } catch {
    // not JSON: the text is the message
  }
  const chosen = typeof message === 'string' && message.trim() !== '' ? message : text.trim();
  if (chosen === '') return `HTTP ${status}`;
  return chosen.length > 1000 ? `${chosen.slice(0, 1000)}…` : chosen;
}
