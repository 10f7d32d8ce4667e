import { readdirSync, readFileSync } from 'node:fs';

/** Live (not zombie) processes with an argument containing `text`: what a test started, found without trusting Steward. */
export function processesWith(text: string): number[] {
  return liveProcesses('cmdline', (args) => args.some((arg) => arg.includes(text)));
}

/** Live processes whose environment holds `entry` (`NAME=value`), as a test set it for the processes it started. */
export function processesWithEnv(entry: string): number[] {
  return liveProcesses('environ', (vars) => vars.includes(entry));
}

function liveProcesses(file: 'cmdline' | 'environ', matches: (fields: string[]) => boolean) {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (!matches(readFileSync(`/proc/${entry}/${file}`, 'utf8').split('\0'))) continue;
      if (isAlive(Number(entry))) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids.sort((a, b) => a - b);
}

/** The parent pid of a running process. */
export function parentOf(pid: number): number {
  return Number(statFields(pid)[1]);
}

/** The process group of `pid` (Linux). */
export function processGroupOf(pid: number): number {
  return Number(statFields(pid)[2]);
}

/** `/proc/<pid>/stat` after the command's name: state, ppid, pgrp, … */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** True while `pid` is a live (not zombie) process. */
export function isAlive(pid: number): boolean {
  try {
    return statFields(pid)[0] !== 'Z';
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
