import type { Config } from '../../src/config.js';
import type { ModuleDefinition } from '../../src/sdk/index.js';
import { type Behaviour, createFakeModule, type FakeModule } from './fake-module.js';
import { call, type Harness, type JsonResponse, startSteward, waitFor } from './harness.js';

/**
 * A Steward with the scriptable fake module (kind `fake`, plus any extra fake kinds)
 * whose sync behaviour is scripted per URN. Without a worker and with no backoff by
 * default: tests step the loop with `drain()` / `h.steward.engine.runOnce()`, and a
 * failed sync is due again at once.
 */
export interface FakeSteward {
  h: Harness;
  api: string;
  modules: Record<string, FakeModule>;
  /** Behaviours for the next sync calls of `urn`, in order; after them, the standing one or ok. */
  next(urn: string, ...behaviours: Behaviour[]): void;
  /** What every sync call of `urn` does until changed (undefined: ok). */
  always(urn: string, behaviour: Behaviour | undefined): void;
  create(
    name: string,
    configs?: Record<string, unknown>,
    more?: {
      kind?: string;
      project?: string;
      labels?: Record<string, string>;
      dependencies?: Record<string, string>;
    },
  ): Promise<JsonResponse>;
  get(urn: string): Promise<JsonResponse>;
  /** Every operation (newest first), or those of one URN. */
  operations(urn?: string): Promise<any[]>;
  drain(): Promise<number>;
  close(): Promise<void>;
}

export const urnOf = (name: string, kind = 'fake', project = 'p') =>
  `orn:steward:${kind}:${project}:${name}`;

export async function startFakeSteward(
  options: {
    config?: Partial<Config>;
    kinds?: Array<{ kind: string; dependencies?: ModuleDefinition['dependencies'] }>;
  } = {},
): Promise<FakeSteward> {
  const modules: Record<string, FakeModule> = {};
  for (const spec of [{ kind: 'fake' }, ...(options.kinds ?? [])])
    modules[spec.kind] = createFakeModule(spec);
  const queued = new Map<string, Behaviour[]>();
  const standing = new Map<string, Behaviour>();
  for (const module of Object.values(modules))
    module.script((c) => queued.get(c.urn)?.shift() ?? standing.get(c.urn) ?? { type: 'ok' });
  const h = await startSteward({
    config: { worker: false, backoffBaseMs: 0, backoffMaxMs: 0, ...options.config },
    overrides: {
      extraModules: Object.values(modules).map((m) => ({
        definition: m.definition,
        origin: 'test',
      })),
    },
  });
  const api = h.api;
  return {
    h,
    api,
    modules,
    next(urn, ...behaviours) {
      queued.set(urn, [...(queued.get(urn) ?? []), ...behaviours]);
    },
    always(urn, behaviour) {
      if (behaviour) standing.set(urn, behaviour);
      else standing.delete(urn);
    },
    create(name, configs = {}, more = {}) {
      const { kind = 'fake', project = 'p', labels, dependencies } = more;
      return call('POST', `${api}/resources`, {
        kind,
        project,
        name,
        labels,
        spec: { configs, dependencies },
      });
    },
    get: (urn) => call('GET', `${api}/resources/${urn}`),
    async operations(urn) {
      const res = await call('GET', `${api}/operations?page_size=500${urn ? `&urn=${urn}` : ''}`);
      expect(res.status).toBe(200);
      return res.body.operations;
    },
    drain: () => h.steward.engine.drain(),
    close: () => h.close(),
  };
}

/** A gate behaviour: the sync call waits until `release()`. */
export function createGate(): { behaviour: Behaviour; release(): void } {
  let release!: () => void;
  const until = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { behaviour: { type: 'gate', until }, release };
}

/** Waits until the fake module of `kind` has been called for `urn` with `action`. */
export function syncCalled(s: FakeSteward, urn: string, action: string, kind = 'fake') {
  return waitFor(
    () => s.modules[kind]!.ledger.calls.some((c) => c.urn === urn && c.action === action),
    `a ${action} sync of ${urn}`,
  );
}

/** Asserts the error answer of docs/design.md §8: a status, `{"error": {"code", "message", "details"?}}`. */
export function expectError(res: JsonResponse, status: number, code: string): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.message.length).toBeGreaterThan(0);
  expect(
    Object.keys(res.body.error).filter((key) => !['code', 'message', 'details'].includes(key)),
  ).toEqual([]);
}
