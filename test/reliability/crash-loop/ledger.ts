import { findOverlaps, type LedgerLine, openSyncs } from '../../helpers/ledger.js';
import type { KilledProcess } from './supervisor.js';

export interface LedgerCheck {
  /** Syncs whose process was killed before they ended: excused from the overlap check. */
  cutShort: LedgerLine[];
  /** Two syncs of one resource at once (those cut short left out). */
  overlaps: string[];
  /** A sync started for a version older than one whose sync already returned COMPLETED. */
  stale: string[];
  /** A sync started for a version older than one a sync had already started for. */
  backwards: string[];
  /** Syncs of a process that was not killed and never ended. */
  unended: string[];
  /** Lines a killed process wrote after its exit was seen (the kill did not take). */
  late: string[];
  /** Lines without the version field. */
  malformed: string[];
  /** Resources at the end whose final version has no COMPLETED sync in the ledger. */
  missingCompletion: string[];
}

/**
 * The ledger's verdicts for the crash loop. `finals` maps each resource left at the end to its version.
 */
export function checkLedger(
  lines: readonly LedgerLine[],
  killed: readonly KilledProcess[],
  finals: ReadonlyMap<string, number>,
): LedgerCheck {
  const deadAt = new Map(killed.map((k) => [k.pid, k.deadAtMs]));
  const open = openSyncs(lines);
  const cutShort = open.filter((line) => deadAt.has(line.pid));
  const excused = new Set(cutShort);
  const newestCompleted = new Map<string, number>();
  const newestStarted = new Map<string, number>();
  const completed = new Set<string>();
  const stale: string[] = [];
  const backwards: string[] = [];
  for (const line of lines) {
    if (line.version === undefined) continue;
    if (line.event === 'end') {
      if (line.result === 'COMPLETED') {
        newestCompleted.set(line.urn, Math.max(newestCompleted.get(line.urn) ?? 0, line.version));
        completed.add(`${line.urn} ${line.version}`);
      }
      continue;
    }
    const done = newestCompleted.get(line.urn) ?? 0;
    if (line.version < done)
      stale.push(
        `${line.urn}: pid ${line.pid} started v${line.version} at ${line.atMs}, after a sync of v${done} completed`,
      );
    const started = newestStarted.get(line.urn) ?? 0;
    if (line.version < started)
      backwards.push(
        `${line.urn}: pid ${line.pid} started v${line.version} at ${line.atMs}, after a sync of v${started} started`,
      );
    newestStarted.set(line.urn, Math.max(started, line.version));
  }
  return {
    cutShort,
    overlaps: findOverlaps(lines, (start) => excused.has(start)),
    stale,
    backwards,
    unended: open.filter((line) => !deadAt.has(line.pid)).map(show),
    late: lines.filter((line) => line.atMs > (deadAt.get(line.pid) ?? Infinity)).map(show),
    malformed: lines
      .filter(
        (line) => line.version === undefined || (line.event === 'end' && line.result === undefined),
      )
      .map(show),
    missingCompletion: [...finals]
      .filter(([urn, version]) => !completed.has(`${urn} ${version}`))
      .map(([urn, version]) => `${urn} v${version}`),
  };
}

function show(line: LedgerLine): string {
  return `${line.event} ${line.urn} pid ${line.pid} at ${line.atMs} v${line.version ?? '?'} ${line.result ?? ''}`.trim();
}
