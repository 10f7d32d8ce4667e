import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Who a pid is, precisely enough to tell it from a later process that reuses the
 * pid: the boot it belongs to and its start time in clock ticks since boot
 * (/proc/<pid>/stat field 22). Linux only: without /proc nothing is ever adopted.
 */
export interface ProcessIdentity {
  pid: number;
  boot_id: string;
  start_ticks: number;
  /** The start time for people (to about 10 ms): boot time + start_ticks / CLK_TCK (100 on every Linux Steward supports). */
  started_at: string;
}

const CLK_TCK = 100;

/** True when this machine has the /proc files the identity check needs. */
export function hasProcfs(): boolean {
  return (
    readText('/proc/self/stat') !== undefined &&
    readText('/proc/sys/kernel/random/boot_id') !== undefined
  );
}

/**
 * The identity of a live process; undefined when it is gone, a zombie, or /proc is missing.
 * `exitedToo`: a zombie's identity as well (its parent has not collected its exit yet).
 */
export function readIdentity(pid: number, { exitedToo = false } = {}): ProcessIdentity | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const stat = readText(`/proc/${pid}/stat`);
  const bootId = readText('/proc/sys/kernel/random/boot_id')?.trim();
  if (stat === undefined || !bootId) return undefined;
  // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const startTicks = Number(fields[19]);
  if ((!exitedToo && (state === 'Z' || state === 'X')) || !Number.isSafeInteger(startTicks))
    return undefined;
  // Boot time from the uptime (10 ms precision), not /proc/stat btime (whole seconds).
  const uptimeSeconds = Number(readText('/proc/uptime')?.split(' ')[0] ?? 0);
  const bootMs = Date.now() - uptimeSeconds * 1000;
  return {
    pid,
    boot_id: bootId,
    start_ticks: startTicks,
    started_at: new Date(Math.round(bootMs + (startTicks * 1000) / CLK_TCK)).toISOString(),
  };
}

/** True when `record` still names the very process it was written for (same pid, boot and start time). */
export function isSameProcess(
  record: Pick<ProcessIdentity, 'pid' | 'boot_id' | 'start_ticks'>,
): boolean {
  const now = readIdentity(record.pid);
  return (
    now !== undefined && now.boot_id === record.boot_id && now.start_ticks === record.start_ticks
  );
}

/**
 * The argument vector a live process was started with (/proc/<pid>/cmdline), argv[0] included;
 * undefined when it is gone or unreadable. A program may rewrite it (process.title, setproctitle).
 */
export function readCommandLine(pid: number): string[] | undefined {
  const text = readText(`/proc/${pid}/cmdline`);
  if (!text) return undefined; // a zombie or kernel thread has an empty one
  return (text.endsWith('\0') ? text.slice(0, -1) : text).split('\0');
}

/**
 * Signals the process group led by `pid` (every replica is spawned detached, so it leads one), or
 * only `pid` when `group` is false (an adopted process may not lead a group).
 */
function signalGroup(pid: number, signal: NodeJS.Signals, group = true): void {
  try {
    process.kill(group ? -pid : pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/**
 * Stops the process group of `record` (only the process itself when `group` is false): SIGTERM,
 * then SIGKILL once `graceMs` has passed. Does nothing when the record names a process that is
 * gone or a different one (a reused pid is never signalled). Resolves once it is gone.
 */
export async function stopProcessGroup(
  record: ProcessIdentity,
  graceMs: number,
  signal?: AbortSignal,
  group = true,
): Promise<'gone' | 'terminated' | 'killed'> {
  if (!isSameProcess(record)) return 'gone';
  signalGroup(record.pid, 'SIGTERM', group);
  if (await waitUntilGone(record, graceMs, signal)) return 'terminated';
  if (isSameProcess(record)) signalGroup(record.pid, 'SIGKILL', group);
  if (await waitUntilGone(record, 5000, signal)) return 'killed';
  throw new Error(`process ${record.pid} survived SIGKILL`);
}

async function waitUntilGone(
  record: ProcessIdentity,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!isSameProcess(record)) return true;
    if (Date.now() >= deadline) return false;
    signal?.throwIfAborted();
    await sleep(20);
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
