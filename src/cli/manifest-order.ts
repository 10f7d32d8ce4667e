import { CliError, EXIT } from './cli-error.js';
import type { Manifest } from './manifest-files.js';

/**
 * The manifests in an order where each comes after the ones of the set it depends on (Kahn's
 * algorithm; among the ready ones, the order they were read in). A dependency outside the set is
 * not ordered here (it must exist already: outsideDependencies). A cycle is an error naming it.
 */
export function orderByDependencies(manifests: readonly Manifest[]): Manifest[] {
  const byUrn = new Map(manifests.map((manifest) => [manifest.urn, manifest]));
  const waitingOn = new Map(
    manifests.map((m) => [m.urn, new Set(m.dependsOn.filter((urn) => byUrn.has(urn)))]),
  );
  const ordered: Manifest[] = [];
  const placed = new Set<string>();
  while (ordered.length < manifests.length) {
    const ready = manifests.filter(
      (m) => !placed.has(m.urn) && [...waitingOn.get(m.urn)!].every((urn) => placed.has(urn)),
    );
    if (ready.length === 0) {
      const cycle = findCycle(
        manifests.filter((m) => !placed.has(m.urn)),
        waitingOn,
      );
      throw new CliError(
        `the documents depend on each other in a cycle: ${cycle.join(' → ')}; nothing was applied`,
        EXIT.usage,
      );
    }
    for (const manifest of ready) {
      ordered.push(manifest);
      placed.add(manifest.urn);
    }
  }
  return ordered;
}

/** The URNs the manifests depend on that are not among them, each once, in order. */
export function outsideDependencies(manifests: readonly Manifest[]): string[] {
  const inSet = new Set(manifests.map((manifest) => manifest.urn));
  return [...new Set(manifests.flatMap((m) => m.dependsOn).filter((urn) => !inSet.has(urn)))];
}

/** One cycle among manifests that all still wait: follow a wait until a URN comes back. */
function findCycle(stuck: readonly Manifest[], waitingOn: Map<string, Set<string>>): string[] {
  const stuckUrns = new Set(stuck.map((m) => m.urn));
  const path: string[] = [];
  let urn = stuck[0]!.urn;
  while (!path.includes(urn)) {
    path.push(urn);
    urn = [...waitingOn.get(urn)!].find((next) => stuckUrns.has(next))!;
  }
  return [...path.slice(path.indexOf(urn)), urn];
}
