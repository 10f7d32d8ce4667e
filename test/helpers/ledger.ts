import { existsSync, readFileSync } from 'node:fs';

/** One line of the ledger fixture module (test/fixtures/modules/ledger): a sync call starting or ending. */
export interface LedgerLine {
  event: 'start' | 'end';
  urn: string;
  pid: number;
  atMs: number;
}

/** The ledger in append order; empty until the first sync writes it. */
export function readLedger(file: string): LedgerLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [event, urn, pid, atMs] = line.split(' ') as [LedgerLine['event'], string, string, string];
      return { event, urn, pid: Number(pid), atMs: Number(atMs) };
    });
}

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

/** The `start` lines that no `end` by the same process follows (a sync running now, or cut short by a kill). */
export function openSyncs(lines: readonly LedgerLine[]): LedgerLine[] {
  const open = new Map<string, LedgerLine>();
  for (const line of lines) {
    const key = `${line.urn} ${line.pid}`;
    if (line.event === 'start') open.set(key, line);
    else open.delete(key);
  }
  return [...open.values()];
}

/** How many sync calls each resource had, and each process made. */
export function countSyncs(lines: readonly LedgerLine[]): { perUrn: Map<string, number>; perPid: Map<number, number> } {
  const perUrn = new Map<string, number>();
  const perPid = new Map<number, number>();
  for (const line of lines) {
    if (line.event !== 'start') continue;
    perUrn.set(line.urn, (perUrn.get(line.urn) ?? 0) + 1);
    perPid.set(line.pid, (perPid.get(line.pid) ?? 0) + 1);
  }
  return { perUrn, perPid };
}

/** The value below which `share` of the sorted values lie (nearest rank). */
export function percentile(values: readonly number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))] ?? NaN;
}
