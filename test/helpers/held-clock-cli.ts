import type { Config } from '../../src/config.js';
import type { ModuleDefinition } from '../../src/sdk/index.js';
import { type CliResult, runCli } from './cli-run.js';
import { type Harness, startSteward } from './harness.js';

/**
 * A real Steward whose clock the test holds, with the worker off, and the built CLI pointed at it:
 * the test moves `clock.nowMs` and steps the scheduler and the engine by hand, so it never waits
 * for a time to come (the CLI does no time arithmetic of its own).
 */
export interface HeldClockCli {
  h: Harness;
  /** The Steward's clock, epoch ms; the test moves it. */
  clock: { nowMs: number };
  /** Runs `steward args…` against this Steward. */
  steward(...args: string[]): Promise<CliResult>;
}

export async function startHeldClockCli(
  startMs: number,
  config: Partial<Config> = {},
  modules: readonly ModuleDefinition[] = [],
): Promise<HeldClockCli> {
  const clock = { nowMs: startMs };
  const h = await startSteward({
    config: { worker: false, ...config },
    overrides: {
      clock: () => new Date(clock.nowMs),
      extraModules: modules.map((definition) => ({ definition, origin: 'test' as const })),
    },
  });
  return { h, clock, steward: (...args) => runCli(args, { STEWARD_URL: h.url }) };
}

/** The JSON a command printed, once it is known to have succeeded with nothing on stderr. */
export function jsonOf<T>(run: CliResult): T {
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(run.stdout) as T;
}
