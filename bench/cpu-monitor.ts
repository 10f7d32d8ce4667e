import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

export interface CpuShare {
  /** Share of the whole machine (all cores) this process used, in percent. */
  benchPct: number;
  /** Share of the whole machine other processes used: a noisy neighbour spoils tail latencies. */
  othersPct: number;
}

/**
 * Measures, over a phase, how busy the machine was and how much of that was
 * this process (Steward, the load client thread and the ceiling all run in it).
 * Linux only; elsewhere the figures are NaN.
 */
export function startCpuMonitor(): () => CpuShare {
  const machine0 = machineBusy();
  const self0 = process.cpuUsage();
  const wall0 = process.hrtime.bigint();
  return () => {
    const machine1 = machineBusy();
    const self = process.cpuUsage(self0);
    const wallUs = Number(process.hrtime.bigint() - wall0) / 1000;
    const capacityUs = wallUs * availableParallelism();
    const benchPct = ((self.user + self.system) / capacityUs) * 100;
    if (!machine0 || !machine1) return { benchPct, othersPct: Number.NaN };
    const busyPct = ((machine1.busy - machine0.busy) / (machine1.total - machine0.total)) * 100;
    return { benchPct, othersPct: Math.max(0, busyPct - benchPct) };
  };
}

function machineBusy(): { busy: number; total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const total = fields.reduce((sum, x) => sum + x, 0);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}
