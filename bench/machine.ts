import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, release, totalmem, type } from 'node:os';

import BetterSqlite3 from 'better-sqlite3';

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  sqlite: string;
  date: string;
}

/** What the figures were measured on. */
export function describeMachine(): Machine {
  const db = new BetterSqlite3(':memory:');
  const { version } = db.prepare('select sqlite_version() as version').get() as { version: string };
  db.close();
  return {
    cpu: cpuModel(),
    cores: availableParallelism(),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${type()} ${release()}`,
    node: process.version,
    sqlite: version,
    date: new Date().toISOString(),
  };
}

function cpuModel(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    if (line) return line.split(':')[1]!.trim();
  } catch {
    // not Linux: fall back to what node reports
  }
  return cpus()[0]?.model ?? 'unknown';
}
