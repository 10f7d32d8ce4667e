import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

import {
  type Resource,
  type SyncContext,
  type SyncInput,
  type SyncResult,
  TerminalError,
} from '../../src/sdk/index.js';
import { childEnv } from '../child-process/child-env.js';
import type { EnvAllowEntry } from '../child-process/env-allow-list.js';
import { resolveLaunch } from '../child-process/launch.js';
import { rotateByCopy } from '../child-process/log-files.js';
import { alreadyExists, ownershipOf, ownerToken, writeOwner } from '../child-process/ownership.js';
import {
  hasProcfs,
  isSameProcess,
  readCommandLine,
  stopProcessGroup,
} from '../child-process/proc-info.js';
import { resourceDir } from '../child-process/run-dir.js';
import { spawnDetached } from '../child-process/spawn-detached.js';
import { adoptedOutput, readPidFile } from './pid-file.js';
import {
  loadRecords,
  type ReplicaRecord,
  type ReplicaRecords,
  saveRecords,
} from './pid-records.js';
import type { ProcessData } from './plan.js';
import type { ProcessConfigs, ProcessOutput } from './schema.js';
import { converge, type ExitLedger } from './supervisor.js';

export interface ProcessSyncDeps {
  allowList: readonly string[];
  envAllowList: readonly EnvAllowEntry[];
  pidDirs: readonly string[];
  runDir: string;
  logFileMaxBytes: number;
  stopGraceMs: number;
  searchPath: string;
  baseEnv: Record<string, string>;
  exits: ExitLedger;
}

/** The log file of one replica (stdout and stderr together, as the program wrote them). */
export const replicaLog = (dir: string, index: number) => join(dir, `replica-${index}.log`);

/**
 * One pending step per call (`stop_all`, `forget_exited`), then converge: the
 * replicas are brought to the desired count. A drift re-sync (every
 * `resyncIntervalMs`) runs converge again, which is how an exited replica is noticed.
 */
export async function syncProcess(
  deps: ProcessSyncDeps,
  { resource }: SyncInput<ProcessConfigs, ProcessOutput, ProcessData>,
  ctx: SyncContext,
): Promise<SyncResult<ProcessOutput, ProcessData>> {
  const dir = resourceDir(deps.runDir, resource);
  const configs = resource.spec.configs;
  const pending = resource.state.data?.pending ?? [];
  const [step, ...rest] = pending;
  const owner = ownerToken(resource);
  let records = await loadRecords(dir);
  const ownership = await ownershipOf(dir, resource, resource.state.output.run_dir === dir);
  const stop = async (record: ReplicaRecord) => {
    const how = await stopProcessGroup(record, deps.stopGraceMs, ctx.signal);
    deps.exits.take(record);
    ctx.log.info('replica stopped', { index: record.index, pid: record.pid, how });
  };

  const desired = configs.stopped ? 0 : (configs.replicas ?? 1);
  const adopted = resource.state.data?.adopted;
  if (adopted) {
    // The adopted process is the replica while it lives (pid and start time checked: never a reused pid).
    const alive = isSameProcess(adopted);
    const ending = resource.state.action === 'delete' || step === 'stop_all' || desired === 0;
    if (alive && ending) {
      // Only the process itself: Steward did not start it, so it may not lead a process group.
      const how = await stopProcessGroup(adopted, deps.stopGraceMs, ctx.signal, false);
      ctx.log.info('adopted process stopped', { pid: adopted.pid, how });
    } else if (alive) {
      const command = readCommandLine(adopted.pid)?.[0] ?? configs.command;
      return {
        status: 'COMPLETED',
        data: { pending: [], owner, adopted },
        output: adoptedOutput(adopted, command, dir),
      };
    } else
      ctx.log.warn('adopted process ended; replicas are started as configured', {
        pid: adopted.pid,
      });
    // Gone or stopped: forgotten (the results below carry no `adopted`).
  }

  if (resource.state.action === 'delete') {
    // A resource whose create was refused (or a stranger's directory) is forgotten, its processes untouched.
    if (ownership !== 'foreign') {
      await stopAll(records, stop);
      await rm(dir, { recursive: true, force: true });
    } else ctx.log.warn('run directory not made by this resource; left as it is', { dir });
    return { status: 'COMPLETED', data: { pending: [], owner } };
  }
  if (resource.state.action === 'create' && configs.pid_file !== undefined) {
    // Before anything is written: a running process the pid file names is someone else's.
    const found = await readPidFile(configs.pid_file, deps.pidDirs);
    if (found)
      throw new TerminalError(alreadyExists(`a process (pid ${found.pid})`, configs.pid_file));
  }
  if (ownership === 'foreign') {
    const live = records.replicas.filter((record) => !record.exited && isSameProcess(record));
    if (live.length) {
      const pids = live.map((record) => record.pid).join(', ');
      throw new TerminalError(alreadyExists(`a process (pid ${pids})`, dir));
    }
    // Nothing of it runs any more (an orphaned resource's stale records): started afresh, logs appended.
    records = { restarts: 0, replicas: [] };
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (ownership !== 'ours') {
    // Before anything starts: a crash after the start finds this marker and adopts what it started.
    await writeOwner(dir, resource);
    await saveRecords(dir, records);
  }

  if (step) {
    if (step === 'stop_all') records = { ...records, replicas: await stopAll(records, stop) };
    if (step === 'forget_exited')
      records = { ...records, replicas: records.replicas.filter((record) => !record.exited) };
    await saveRecords(dir, records);
    return { status: 'PENDING', data: { pending: rest, owner } };
  }

  // Without /proc no process can be told from another; delete still works (nothing can have been started).
  if (!hasProcfs())
    throw new TerminalError(
      'the process module needs Linux /proc to tell its processes from others',
    );
  let executable: string | undefined;
  records = await converge(records, {
    desired,
    policy: configs.restart ?? 'always',
    exits: deps.exits,
    now: ctx.now,
    log: ctx.log,
    stop,
    save: (next) => saveRecords(dir, executable ? { ...next, executable } : next),
    start: async (index) => {
      // Resolved only when a replica must start, so stopping never depends on the allow-list or PATH.
      executable ??= (await resolveLaunch(configs, deps, dir)).executable;
      return spawnDetached({
        executable,
        args: configs.args ?? [],
        env: childEnv(deps.baseEnv, configs),
        cwd: configs.cwd ?? dir,
        logPath: replicaLog(dir, index),
        stampLines: true,
        onExit: (identity, code, signal) => deps.exits.record(identity, code, signal),
      });
    },
  });
  for (const record of records.replicas)
    await rotateByCopy(replicaLog(dir, record.index), deps.logFileMaxBytes);
  return {
    status: 'COMPLETED',
    data: { pending: [], owner },
    output: describe(resource, records, executable, desired, dir),
  };
}

async function stopAll(
  records: ReplicaRecords,
  stop: (record: ReplicaRecord) => Promise<void>,
): Promise<ReplicaRecord[]> {
  await Promise.all(records.replicas.filter((record) => !record.exited).map(stop));
  return [];
}

/** `state.output` of the replicas `records` names (sync publishes it, observe reports it). */
export function describe(
  resource: Resource<ProcessConfigs>,
  records: ReplicaRecords,
  executable: string | undefined,
  desired: number,
  dir: string,
): ProcessOutput {
  return {
    command: executable ?? records.executable ?? resource.spec.configs.command,
    desired,
    running: records.replicas.filter((record) => !record.exited).length,
    restarts: records.restarts,
    replicas: records.replicas.map((record) => ({
      index: record.index,
      pid: record.pid,
      started_at: record.started_at,
      status: record.exited ? 'exited' : 'running',
      ...(record.exited
        ? {
            exit_code: record.exited.exit_code,
            signal: record.exited.signal,
            exited_at: record.exited.at,
          }
        : {}),
    })),
    run_dir: dir,
  };
}
