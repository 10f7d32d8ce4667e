import type { Logger } from '../../src/sdk/index.js';
import { isSameProcess, type ProcessIdentity } from '../child-process/proc-info.js';
import type { ReplicaExit, ReplicaRecord, ReplicaRecords } from './pid-records.js';

export type RestartPolicy = 'always' | 'on-failure' | 'never';

/**
 * Exit statuses of the replicas this Steward process started (it is their
 * parent, so it hears of them). A replica adopted from an earlier Steward
 * process ends unheard: its status is unknown, and `on-failure` counts that as a failure.
 */
export class ExitLedger {
  private readonly exits = new Map<string, { code: number | null; signal: string | null }>();

  record(identity: ProcessIdentity, code: number | null, signal: string | null): void {
    this.exits.set(key(identity), { code, signal });
    // Exits of replicas Steward stopped itself are never taken: keep the newest only.
    if (this.exits.size > MAX_REMEMBERED) this.exits.delete(this.exits.keys().next().value!);
  }

  take(record: ProcessIdentity): { code: number | null; signal: string | null } | undefined {
    const exit = this.exits.get(key(record));
    this.exits.delete(key(record));
    return exit;
  }
}

const MAX_REMEMBERED = 4096;
const key = (id: ProcessIdentity) => `${id.boot_id}:${id.pid}:${id.start_ticks}`;

export interface ConvergeOptions {
  desired: number;
  policy: RestartPolicy;
  exits: ExitLedger;
  now(): Date;
  log: Logger;
  start(index: number): Promise<ProcessIdentity>;
  stop(record: ReplicaRecord): Promise<void>;
  /** Called after every change, so a crash loses at most the start in flight. */
  save(records: ReplicaRecords): Promise<void>;
}

/**
 * Brings the replicas to `desired`: notices the ones that ended, starts them
 * again as the policy says (counting restarts), starts missing indices, stops
 * the ones past `desired`. Live records are adopted as they are: never a duplicate.
 */
export async function converge(
  records: ReplicaRecords,
  options: ConvergeOptions,
): Promise<ReplicaRecords> {
  const { desired, policy, exits, log } = options;
  const byIndex = new Map<number, ReplicaRecord>();
  for (const record of records.replicas) {
    if (!record.exited && !isSameProcess(record)) {
      const exit = exits.take(record);
      const exited: ReplicaExit = {
        at: options.now().toISOString(),
        exit_code: exit?.code ?? null,
        signal: exit?.signal ?? null,
      };
      log.warn('replica exited', {
        index: record.index,
        pid: record.pid,
        exitCode: exited.exit_code,
        signal: exited.signal,
      });
      byIndex.set(record.index, { ...record, exited });
    } else {
      byIndex.set(record.index, record);
    }
  }
  let current: ReplicaRecords = { ...records, replicas: sorted(byIndex) };
  const surplus = [...byIndex.values()].filter((record) => record.index >= desired);
  if (surplus.length) {
    await Promise.all(
      surplus.filter((record) => !record.exited).map((record) => options.stop(record)),
    );
    for (const record of surplus) byIndex.delete(record.index);
    current = { ...current, replicas: sorted(byIndex) };
  }
  await options.save(current);
  for (let index = 0; index < desired; index += 1) {
    const record = byIndex.get(index);
    if (record && !record.exited) continue;
    if (record?.exited) {
      if (!restartable(policy, record.exited)) continue;
      current = { ...current, restarts: current.restarts + 1 };
    }
    const identity = await options.start(index);
    log.info(record ? 'replica restarted' : 'replica started', { index, pid: identity.pid });
    byIndex.set(index, { index, ...identity });
    current = { ...current, replicas: sorted(byIndex) };
    await options.save(current);
  }
  return current;
}

function restartable(policy: RestartPolicy, exit: ReplicaExit): boolean {
  if (policy === 'always') return true;
  if (policy === 'never') return false;
  return exit.exit_code !== 0; // a signal, a non-zero code, or unknown
}

function sorted(byIndex: Map<number, ReplicaRecord>): ReplicaRecord[] {
  return [...byIndex.values()].sort((a, b) => a.index - b.index);
}
