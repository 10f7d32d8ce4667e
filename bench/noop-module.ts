import { defineModule } from '../src/sdk/index.js';

/** The action a benchmark schedule fires. */
export const NOOP_ACTION = 'touch';

/** The benchmark's kind: one step that does nothing, so what is measured is Steward itself. */
export const NOOP_KIND = 'noop';

export const noopModule = defineModule({
  kind: NOOP_KIND,
  description: 'Benchmark kind: one step, no side effects.',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  // `touch`: the action the schedules phase fires (bench/schedule-burst.ts), planned like the rest.
  actions: { create: {}, update: {}, delete: {}, touch: { description: 'Does nothing.' } },
  plan: () => ({ data: { pending: ['noop'] } }),
  sync: () => Promise.resolve({ status: 'COMPLETED' as const }),
});

/** The create body of resource `name` in `project`, as the API takes it. */
export function noopCreateBody(project: string, name: string) {
  return { kind: NOOP_KIND, project, name, spec: { configs: {}, dependencies: {} } };
}

/**
 * Creates per project in the API benches: their runs make tens of thousands, and a project may hold
 * 10,000 by default (STEWARD_QUOTA_PROJECT_RESOURCES); past that every create is a 403, which
 * measures the quota.
 */
const PER_PROJECT = 5_000;

/** The project of the `index`th resource a bench creates: `project`, then `project-1`, `project-2`… */
export function spreadProject(project: string, index: number): string {
  return index < PER_PROJECT ? project : `${project}-${Math.floor(index / PER_PROJECT)}`;
}

export function noopUrn(project: string, name: string): string {
  return `orn:steward:${NOOP_KIND}:${project}:${name}`;
}

/** r-00042: names that sort in creation order. */
export function benchName(i: number): string {
  return `r-${String(i).padStart(5, '0')}`;
}
