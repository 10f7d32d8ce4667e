import { readdirSync, readFileSync } from 'node:fs';

/** User and system CPU time of a process in milliseconds, from /proc (0 where there is none). */
export function cpuMsOf(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/**
 * The process and the processes it started, children first-level and below (`steward serve` and
 * its worker process, src/worker-process/), from each process's parent in /proc.
 */
export function processTree(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(parent, [...(parents.get(parent) ?? []), Number(entry)]);
    } catch {
      // ended meanwhile
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i += 1) tree.push(...(parents.get(tree[i]!) ?? []));
  return tree;
}

/** `cpuMsOf` summed over `processTree(pid)`. */
export function treeCpuMsOf(pid: number): number {
  return processTree(pid).reduce((sum, each) => sum + cpuMsOf(each), 0);
}

/** Resident memory of `processTree(pid)`, in MiB (each process's VmRSS; pages they share counted in each). */
export function treeRssMiB(pid: number): number {
  let kib = 0;
  for (const each of processTree(pid)) {
    try {
      kib += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${each}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // ended meanwhile
    }
  }
  return kib / 1024;
}

/** The same for each thread of the process, by thread id (empty where there is no /proc). */
export function threadCpuMsOf(pid: number): Map<string, number> {
  try {
    return new Map(
      readdirSync(`/proc/${pid}/task`).map((tid) => [
        tid,
        statCpuMs(`/proc/${pid}/task/${tid}/stat`),
      ]),
    );
  } catch {
    return new Map();
  }
}

function statCpuMs(path: string): number {
  try {
    // Fields after the command's last closing parenthesis (a command may hold one): utime and
    // stime are the 12th and 13th, in clock ticks, 100 a second on Linux (USER_HZ).
    const stat = readFileSync(path, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}
