import { readdirSync, readFileSync } from 'node:fs';

/** User and system CPU time of a process in milliseconds, from /proc (0 where there is none). */
export function cpuMsOf(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
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
