import { readdirSync, readFileSync } from 'node:fs';

/** Live (not zombie) processes with an argument containing `text`: what a test started, found without trusting Steward. */
export function processesWith(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!args.some((arg) => arg.includes(text))) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids.sort((a, b) => a - b);
}

/** True while `pid` is a live (not zombie) process. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** SIGKILLs every process `processesWith(text)` finds; returns what it found (a test asserts it is empty). */
export function killAllWith(text: string): number[] {
  const found = processesWith(text);
  for (const pid of found) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return found;
}
