import type { CreateRequest, RequestOptions } from '../core/requests/command-types.js';
import type { ContractSteward } from './contract-steward.js';
import { message, waitUntilDue } from './converge.js';

const AS: RequestOptions = { actor: 'contract-kit' };

export interface Fixture {
  /** Its file (`fixtures/server.json`) or its place in the `fixtures` option. */
  name: string;
  create: CreateRequest;
}

interface Settling {
  steward: ContractSteward;
  stepBudget: number;
  maxRealWaitMs: number;
}

/**
 * Creates the fixtures in order, each converged to COMPLETED before the next, so
 * the examples find their dependencies ready. Stops at the first that fails and
 * says why; the URNs of those created (to delete later) are returned either way.
 * No rule judges them: they belong to other modules, or are only the setting.
 */
export async function createFixtures(
  ctx: Settling,
  fixtures: readonly Fixture[],
): Promise<{ urns: string[]; problem?: string }> {
  const urns: string[] = [];
  for (const fixture of fixtures) {
    const label = `fixture ${fixture.name}`;
    let urn: string;
    try {
      urn = (await ctx.steward.commands.create(fixture.create, AS)).resource.urn;
    } catch (err) {
      return { urns, problem: `${label}: create refused: ${message(err)}` };
    }
    urns.push(urn);
    const end = await settle(ctx, urn);
    if (end !== 'COMPLETED')
      return { urns, problem: `${label} (${urn}): create did not converge: ${end}` };
  }
  return { urns };
}

/** Deletes the fixtures, last created first, each until it is gone. Returns what went wrong, if anything. */
export async function deleteFixtures(ctx: Settling, urns: readonly string[]): Promise<string[]> {
  const problems: string[] = [];
  for (const urn of [...urns].reverse()) {
    try {
      if (!(await ctx.steward.store.findResource(urn))) continue;
      await ctx.steward.commands.remove(urn, AS);
    } catch (err) {
      problems.push(`fixture ${urn}: delete refused: ${message(err)}`);
      continue;
    }
    const end = await settle(ctx, urn);
    if (end !== 'GONE') problems.push(`fixture ${urn}: delete did not converge: ${end}`);
  }
  return problems;
}

/** Steps the engine until `urn` is COMPLETED, ERROR or gone, within the step budget (counted in engine rounds). */
async function settle(
  { steward, stepBudget, maxRealWaitMs }: Settling,
  urn: string,
): Promise<string> {
  for (let round = 0; round < stepBudget * 3 + 10; round += 1) {
    const claimed = await steward.engine.runOnce(1);
    const stored = await steward.store.findResource(urn);
    if (!stored) return 'GONE';
    if (stored.state.status === 'COMPLETED') return 'COMPLETED';
    if (stored.state.status === 'ERROR')
      return `ERROR: ${stored.state.sync.last_error ?? 'no error recorded'}`;
    if (claimed === 0) await waitUntilDue(steward, stored, maxRealWaitMs);
  }
  return `still PENDING after ${stepBudget * 3 + 10} rounds of the engine`;
}
