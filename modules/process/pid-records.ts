import { join } from 'node:path';

import type { ProcessIdentity } from '../child-process/proc-info.js';
import { readJsonFile, writeJsonAtomic } from '../child-process/run-dir.js';

/** How a replica ended, as far as Steward knows (both null: it ended while another Steward process ran it). */
export interface ReplicaExit {
  at: string;
  exit_code: number | null;
  signal: string | null;
}

/** One replica: which process runs it, or how it ended when the restart policy keeps it down. */
export interface ReplicaRecord extends ProcessIdentity {
  index: number;
  exited?: ReplicaExit;
}

/**
 * `replicas.json` in the resource's run directory: the source of truth about what
 * runs (written right after each start, before the sync reports back), so a
 * Steward that restarts adopts the live processes instead of starting more.
 */
export interface ReplicaRecords {
  restarts: number;
  /** The executable the replicas were last started with. */
  executable?: string;
  replicas: ReplicaRecord[];
}

export const RECORDS_FILE = 'replicas.json';

export async function loadRecords(dir: string): Promise<ReplicaRecords> {
  const raw = await readJsonFile<Partial<ReplicaRecords>>(join(dir, RECORDS_FILE));
  const replicas = Array.isArray(raw?.replicas) ? raw.replicas.filter(isRecord) : [];
  return {
    restarts: Number.isSafeInteger(raw?.restarts) ? raw!.restarts! : 0,
    ...(typeof raw?.executable === 'string' ? { executable: raw.executable } : {}),
    replicas: replicas.sort((a, b) => a.index - b.index),
  };
}

export function saveRecords(dir: string, records: ReplicaRecords): Promise<void> {
  return writeJsonAtomic(join(dir, RECORDS_FILE), records);
}

/** A hand-edited or damaged entry is dropped (its process, if any, is then not adopted). */
function isRecord(value: unknown): value is ReplicaRecord {
  const r = value as ReplicaRecord | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    Number.isSafeInteger(r.index) &&
    r.index >= 0 &&
    Number.isSafeInteger(r.pid) &&
    typeof r.boot_id === 'string' &&
    Number.isSafeInteger(r.start_ticks) &&
    typeof r.started_at === 'string'
  );
}
