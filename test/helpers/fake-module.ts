import {
  defineModule,
  type ModuleDefinition,
  type ObserveResult,
  type Resource,
  type SyncResult,
  TerminalError,
  ValidationError,
} from '../../src/sdk/index.js';

/** What the next sync call does. */
export type Behaviour =
  | { type: 'ok' }
  | { type: 'throw'; message: string }
  | { type: 'terminal'; message: string }
  | { type: 'invalid'; value: unknown }
  /** Never settles, and ignores the abort signal. */
  | { type: 'hang' }
  /** Waits for the promise (a test's gate), then carries on as ok. */
  | { type: 'gate'; until: Promise<void> }
  | { type: 'delay'; ms: number }
  | { type: 'requeue'; ms: number }
  /** Throws `value` as is (not necessarily an Error). */
  | { type: 'throw-value'; value: unknown }
  /** Returns COMPLETED with an output of `bytes` characters, allocated afresh on each call. */
  | { type: 'oversized'; bytes: number }
  /**
   * Returns COMPLETED with `blob` as its output, made before the call: the call itself is
   * immediate, so the time to allocate it cannot count against the sync's deadline.
   */
  | { type: 'oversized'; blob: string }
  /**
   * Ignores the abort signal: after `ms` it logs, reads the clock, calls `settled`,
   * then carries on as ok (`resolve`) or throws (`reject`).
   */
  | { type: 'late'; ms: number; outcome: 'resolve' | 'reject'; settled: () => void }
  /** Returns as ok, then on the next turn of the event loop makes the returned output circular and its data huge. */
  | { type: 'tamper' };

/** What the next observe call does: return this result (or the default one: what sync would have made), or throw. */
export type ObserveBehaviour =
  | { type: 'default' }
  | { type: 'result'; result: ObserveResult }
  | { type: 'throw'; message: string }
  | { type: 'terminal'; message: string }
  /** Waits for the promise (a test's gate), then carries on as `default`. */
  | { type: 'gate'; until: Promise<void> };

export interface SyncCall {
  urn: string;
  action: string;
  version: number;
  operationId: string;
  worker?: string;
}

/** Records every sync call and any overlap of two calls on one resource. */
export interface Ledger {
  calls: SyncCall[];
  active: Map<string, number>;
  overlaps: string[];
  completed: string[];
  /** Every observe call (import, refresh, observe mode); absent in ledgers made before observe. */
  observes?: SyncCall[];
}

/**
 * A scriptable module for tests: `steps` sync calls per action, `bump` action,
 * a writeOnly `password` config and a writeOnly `token` output. The test decides
 * what each call does with `script`.
 */
export function createFakeModule(
  options: {
    kind?: string;
    dependencies?: ModuleDefinition['dependencies'];
    ledger?: Ledger;
    worker?: string;
    resyncIntervalMs?: number;
    /** Build the kind without `observe` (it cannot be imported, refreshed or observed). */
    withoutObserve?: boolean;
  } = {},
) {
  const ledger: Ledger = options.ledger ?? {
    calls: [],
    active: new Map(),
    overlaps: [],
    completed: [],
  };
  let script: (call: SyncCall) => Behaviour = () => ({ type: 'ok' });
  let observeScript: (call: SyncCall) => ObserveBehaviour = () => ({ type: 'default' });
  const observe = async ({ resource }: { resource: Resource }): Promise<ObserveResult> => {
    const call = callOf(resource, options.worker);
    (ledger.observes ??= []).push(call);
    const behaviour = observeScript(call);
    switch (behaviour.type) {
      case 'throw':
        throw new Error(behaviour.message);
      case 'terminal':
        throw new TerminalError(behaviour.message);
      case 'result':
        return structuredClone(behaviour.result);
      case 'gate':
        await behaviour.until;
        return observedAsSpec(resource);
      case 'default':
        return observedAsSpec(resource);
    }
  };
  const definition = defineModule({
    kind: options.kind ?? 'fake',
    description: 'A scriptable module for tests.',
    configSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        steps: { type: 'integer', minimum: 1, maximum: 100, default: 1 },
        value: {},
        password: { type: 'string', writeOnly: true },
      },
    },
    outputSchema: { type: 'object', properties: { token: { type: 'string', writeOnly: true } } },
    dependencies: options.dependencies,
    resyncIntervalMs: options.resyncIntervalMs,
    actions: {
      create: {},
      update: {},
      delete: {},
      bump: {
        description: 'Adds `by` to value.',
        paramsSchema: {
          type: 'object',
          additionalProperties: false,
          required: ['by'],
          properties: { by: { type: 'integer' } },
        },
      },
    },
    plan({ action, params, desired }) {
      if (desired.spec.configs.value === 'reject')
        throw new ValidationError('value "reject" is refused by the fake module');
      if (action === 'bump') {
        const by = (params as { by: number }).by;
        return {
          configs: { ...desired.spec.configs, value: Number(desired.spec.configs.value ?? 0) + by },
          data: { remaining: 1 },
        };
      }
      return {
        data: { remaining: action === 'delete' ? 1 : Number(desired.spec.configs.steps ?? 1) },
      };
    },
    ...(options.withoutObserve ? {} : { observe }),
    async sync({ resource, dependencies }, ctx): Promise<SyncResult> {
      const call = callOf(resource, options.worker);
      ledger.calls.push(call);
      if (ledger.active.has(resource.urn)) ledger.overlaps.push(resource.urn);
      ledger.active.set(resource.urn, (ledger.active.get(resource.urn) ?? 0) + 1);
      try {
        const behaviour = script(call);
        switch (behaviour.type) {
          case 'throw-value':
            throw behaviour.value;
          case 'oversized':
            return {
              status: 'COMPLETED',
              output: {
                blob:
                  'blob' in behaviour
                    ? behaviour.blob
                    : Buffer.alloc(behaviour.bytes, 'a').toString('latin1'),
              },
            };
          case 'late':
            await new Promise((resolve) => setTimeout(resolve, behaviour.ms));
            ctx.log.info('late sync still running', {
              aborted: ctx.signal.aborted,
              at: ctx.now().toISOString(),
            });
            behaviour.settled();
            if (behaviour.outcome === 'reject') throw new Error('late failure after the abort');
            break;
          case 'throw':
            throw new Error(behaviour.message);
          case 'terminal':
            throw new TerminalError(behaviour.message);
          case 'invalid':
            return behaviour.value as SyncResult;
          case 'hang':
            return await new Promise<never>(() => undefined);
          case 'gate':
            await behaviour.until;
            break;
          case 'delay':
            await new Promise((resolve) => setTimeout(resolve, behaviour.ms));
            break;
          case 'requeue':
            return { status: 'PENDING', requeueAfterMs: behaviour.ms };
          case 'ok':
          case 'tamper':
            break;
        }
        ctx.log.debug('fake step');
        const remaining =
          Number((resource.state.data as { remaining?: number } | null)?.remaining ?? 1) - 1;
        if (remaining > 0) return { status: 'PENDING', data: { remaining } };
        ledger.completed.push(resource.urn);
        const result: SyncResult = {
          status: 'COMPLETED',
          data: { remaining: 0 },
          output: {
            value: resource.spec.configs.value ?? null,
            dependencies: Object.keys(dependencies).sort(),
            token: 'secret-token-value',
            ...(options.worker ? { worker: options.worker } : {}),
          },
        };
        if (behaviour.type === 'tamper') {
          setImmediate(() => {
            const output = result.output as Record<string, unknown>;
            output.self = output;
            (result.data as Record<string, unknown>).blob = 'x'.repeat(4 * 1024 * 1024);
          });
        }
        return result;
      } finally {
        const left = (ledger.active.get(resource.urn) ?? 1) - 1;
        if (left === 0) ledger.active.delete(resource.urn);
        else ledger.active.set(resource.urn, left);
      }
    },
  });
  return {
    definition,
    ledger,
    /** Decides what each following sync call does. */
    script(fn: (call: SyncCall) => Behaviour) {
      script = fn;
    },
    /** Decides what each following observe call does. */
    scriptObserve(fn: (call: SyncCall) => ObserveBehaviour) {
      observeScript = fn;
    },
  };
}

/** What the fake's observe finds by default: the object as the spec says (what sync would have made). */
function observedAsSpec(resource: Resource): ObserveResult {
  const { value } = resource.spec.configs;
  return {
    exists: true,
    configs: value === undefined ? {} : { value },
    output: { value: value ?? null, dependencies: [], token: 'secret-token-value' },
  };
}

function callOf(resource: Resource, worker: string | undefined): SyncCall {
  return {
    urn: resource.urn,
    action: resource.state.action,
    version: resource.version,
    operationId: resource.state.operation_id,
    worker,
  };
}

export type FakeModule = ReturnType<typeof createFakeModule>;
