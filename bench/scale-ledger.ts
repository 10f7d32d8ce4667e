import { existsSync, readFileSync } from 'node:fs';

/**
 * The ledger that test/fixtures/modules/ledger appends to (LEDGER_FILE): one
 * `start`/`end` line per sync call, `{event} {urn} {pid} {epoch ms} {version}`, in
 * append order; an `end` line also says what the call returned (`{result}`).
 * Ledgers written before those two fields existed read with them undefined.
 */
export interface LedgerLine {
  event: 'start' | 'end';
  urn: string;
  pid: number;
  atMs: number;
  /** The resource version the call was for. */
  version?: number;
  /** `end` lines: PENDING or COMPLETED as returned, `error` when the call threw. */
  result?: 'PENDING' | 'COMPLETED' | 'error';
}

export function readLedger(file: string): LedgerLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [event, urn, pid, atMs, version, result] = line.split(' ') as [
        LedgerLine['event'],
        string,
        string,
        string,
        string?,
        LedgerLine['result']?,
      ];
      const parsed: LedgerLine = { event, urn, pid: Number(pid), atMs: Number(atMs) };
      if (version !== undefined) parsed.version = Number(version);
      if (result !== undefined) parsed.result = result;
      return parsed;
    });
}

/** The `start` lines that no `end` by the same process follows: syncs running, or cut short by a kill. */
export function openSyncs(lines: readonly LedgerLine[]): LedgerLine[] {
  const open = new Map<string, LedgerLine>();
  for (const line of lines) {
    const key = `${line.urn} ${line.pid}`;
    if (line.event === 'start') open.set(key, line);
    else open.delete(key);
  }
  return [...open.values()];
}

/**
 * Every `start` of a resource while another sync of it is still open, by any
 * process. The syncs whose `start` line is `excused` (with their `end`) are left
 * out: those cut short by a kill, or frozen with their process, which the caller
 * checks on their own.
 */
export function findOverlaps(
  lines: readonly LedgerLine[],
  excused: (start: LedgerLine) => boolean = () => false,
): string[] {
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
      if (current)
        overlaps.push(
          `${line.urn}: pid ${current.pid} since ${current.atMs}, pid ${line.pid} at ${line.atMs}`,
        );
      open.set(line.urn, line);
    } else if (current?.pid === line.pid) open.delete(line.urn);
  }
  return overlaps;
}

/** Sync calls per resource and per process. */
export function countSyncs(lines: readonly LedgerLine[]): {
  perUrn: Map<string, number>;
  perPid: Map<number, number>;
} {
  const perUrn = new Map<string, number>();
  const perPid = new Map<number, number>();
  for (const line of lines) {
    if (line.event !== 'start') continue;
    perUrn.set(line.urn, (perUrn.get(line.urn) ?? 0) + 1);
    perPid.set(line.pid, (perPid.get(line.pid) ?? 0) + 1);
  }
  return { perUrn, perPid };
}

export interface Takeover {
  urn: string;
  /** When the dead worker's lease ran out (epoch ms). */
  leaseExpiresAtMs: number;
  /** The next `start` of the resource by another process, if any. */
  next?: LedgerLine;
}

/** For each resource a killed worker held, its next sync by another process after the kill. */
export function findTakeovers(
  lines: readonly LedgerLine[],
  deadPid: number,
  killMs: number,
  held: ReadonlyArray<{ urn: string; leaseExpiresAtMs: number }>,
): Takeover[] {
  const firstStart = new Map<string, LedgerLine>();
  for (const line of lines) {
    if (
      line.event === 'start' &&
      line.pid !== deadPid &&
      line.atMs >= killMs &&
      !firstStart.has(line.urn)
    )
      firstStart.set(line.urn, line);
  }
  return held.map((row) => ({ ...row, next: firstStart.get(row.urn) }));
}
