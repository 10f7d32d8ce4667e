// Reading and counting the ledger are shared with the long version in bench/; the test's overlap check
// excuses syncs the caller names (killed or frozen ones), which the bench's does not need.
import type { LedgerLine } from '../../bench/scale-ledger.js';

export { countSyncs, openSyncs, readLedger, type LedgerLine } from '../../bench/scale-ledger.js';

/**
 * Every `start` of a resource while another sync of it is still open, by any
 * process. The syncs whose `start` line is `excused` (with their `end`) are left
 * out: those cut short by a kill, or frozen with their process, which the caller
 * checks on their own.
 */
export function findOverlaps(lines: readonly LedgerLine[], excused: (start: LedgerLine) => boolean = () => false): string[] {
  const open = new Map<string, LedgerLine>();
  const skipped = new Set<string>();
  const overlaps: string[] = [];
  for (const line of lines) {
    const key = `${line.urn} ${line.pid}`;
    if (line.event === 'start' && excused(line)) {
      skipped.add(key);
      continue;
    }
    if (line.event === 'end' && skipped.delete(key)) continue;
    const current = open.get(line.urn);
    if (line.event === 'start') {
      if (current) overlaps.push(`${line.urn}: pid ${current.pid} since ${current.atMs}, pid ${line.pid} at ${line.atMs}`);
      open.set(line.urn, line);
    } else if (current?.pid === line.pid) open.delete(line.urn);
  }
  return overlaps;
}

/** The value below which `share` of the sorted values lie (nearest rank). */
export function percentile(values: readonly number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))] ?? NaN;
}
