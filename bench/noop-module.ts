import { defineModule } from '../src/sdk/index.js';

/** The benchmark's kind: one step that does nothing, so what is measured is Steward itself. */
export const NOOP_KIND = 'noop';

export const noopModule = defineModule({
  kind: NOOP_KIND,
  description: 'Benchmark kind: one step, no side effects.',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  actions: { create: {}, update: {}, delete: {} },
  plan: () => ({ data: { pending: ['noop'] } }),
  sync: () => Promise.resolve({ status: 'COMPLETED' as const }),
});

/** The create body of resource `name` in `project`, as the API takes it. */
export function noopCreateBody(project: string, name: string) {
  return { kind: NOOP_KIND, project, name, spec: { configs: {}, dependencies: {} } };
}

export function noopUrn(project: string, name: string): string {
  return `orn:steward:${NOOP_KIND}:${project}:${name}`;
}

/** r-00042: names that sort in creation order. */
export function benchName(i: number): string {
  return `r-${String(i).padStart(5, '0')}`;
}
