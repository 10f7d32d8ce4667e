import { defineModule, type LogChunk } from '../../src/sdk/index.js';

/** The steps every create and update goes through, one per sync call, kept in `state.data.pending`. */
export const STEPPER_STEPS = ['prepare', 'apply', 'verify'] as const;
type Step = (typeof STEPPER_STEPS)[number];

/**
 * The console tests' kind: steps in `state.data.pending` (as the SDK's stepwise
 * modules keep them), a log per resource that a test can write to and that
 * `logs` follows, a writeOnly `password` config it also logs (Steward must
 * redact it), a writeOnly `token` output, two optional dependencies of its own
 * kind, and `observe` (refresh, drift) reporting `observedNote` when a test sets it.
 */
export function createStepperModule() {
  const logs = new Map<string, LogChunk[]>();
  const waiting = new Set<() => void>();
  let gate: (urn: string, step: Step) => Promise<void> | undefined = () => undefined;
  let observedNote: string | undefined;

  const log = (urn: string, line: string) => {
    const lines = logs.get(urn) ?? [];
    lines.push({ ts: new Date().toISOString(), stream: 'stdout', line });
    logs.set(urn, lines);
    for (const wake of [...waiting]) wake();
  };

  const definition = defineModule<
    { note?: string; size?: number; password?: string },
    { note?: string | null; token?: string },
    { pending: Step[] }
  >({
    kind: 'stepper',
    description: 'The console tests kind: three steps per change, a log, a secret config.',
    configSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        note: { type: 'string' },
        size: { type: 'integer', default: 1 },
        password: { type: 'string', writeOnly: true },
      },
    },
    outputSchema: {
      type: 'object',
      properties: {
        note: { type: ['string', 'null'] },
        token: { type: 'string', writeOnly: true },
      },
    },
    dependencies: {
      base: { kind: 'stepper', optional: true },
      other: { kind: 'stepper', optional: true },
    },
    actions: { create: {}, update: {}, delete: {} },
    plan: ({ action }) => ({ data: { pending: action === 'delete' ? [] : [...STEPPER_STEPS] } }),
    async sync({ resource }) {
      const [step, ...rest] = resource.state.data?.pending ?? [];
      if (step) {
        log(
          resource.urn,
          `step ${step} started (password ${resource.spec.configs.password ?? 'none'})`,
        );
        await gate(resource.urn, step);
        log(resource.urn, `step ${step} done`);
      }
      if (rest.length > 0) return { status: 'PENDING', data: { pending: rest } };
      return {
        status: 'COMPLETED',
        data: { pending: [] },
        output: { note: resource.spec.configs.note ?? null, token: 'stepper-output-secret' },
      };
    },
    observe: async ({ resource }) => ({
      exists: true,
      configs: { note: observedNote ?? resource.spec.configs.note },
      output: { note: observedNote ?? resource.spec.configs.note ?? null },
    }),
    async *logs({ resource }, ctx) {
      let next = Math.max(0, (logs.get(resource.urn)?.length ?? 0) - (ctx.tail ?? Infinity));
      for (;;) {
        const lines = logs.get(resource.urn) ?? [];
        while (next < lines.length) yield lines[next++]!;
        if (!ctx.follow || ctx.signal.aborted) return;
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiting.delete(wake);
            ctx.signal.removeEventListener('abort', wake);
            resolve();
          };
          waiting.add(wake);
          ctx.signal.addEventListener('abort', wake, { once: true });
        });
      }
    },
  });

  return {
    definition,
    /** Writes a line to a resource's log (as its backend would). */
    log,
    /** Decides, before each step, what it waits for (nothing: undefined). */
    gate(fn: (urn: string, step: Step) => Promise<void> | undefined) {
      gate = fn;
    },
    /** What observe finds for `note` from now on (drift when it differs from the spec). */
    observe(note: string | undefined) {
      observedNote = note;
    },
  };
}
