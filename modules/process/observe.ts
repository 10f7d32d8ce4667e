import { access } from 'node:fs/promises';
import { basename, join } from 'node:path';

import type { ObserveResult, SyncContext, SyncInput } from '../../src/sdk/index.js';
import { readOwner } from '../child-process/ownership.js';
import { hasProcfs, isSameProcess, readCommandLine } from '../child-process/proc-info.js';
import { resourceDir } from '../child-process/run-dir.js';
import { adoptedOutput, readPidFile } from './pid-file.js';
import { loadRecords, RECORDS_FILE, type ReplicaRecords } from './pid-records.js';
import type { ProcessData } from './plan.js';
import type { ProcessConfigs, ProcessOutput } from './schema.js';
import { describe } from './sync.js';

/**
 * Reads the run directory's pid records and /proc, and changes nothing: no file is written, no
 * process signalled, the exit ledger not consumed. `exists`: a replica of this run directory is
 * alive (or the records are there and the spec wants none). The configs read back are the ones
 * /proc tells reliably: how many replicas run, and the command line of the first live one
 * (`command`, `args`). `cwd`, `env`, `secret_env` and `restart` are left out: a program may change
 * its working directory, the environment holds the secrets, and the policy is nowhere to be read.
 */
export async function observeProcess(
  { runDir, pidDirs }: { runDir: string; pidDirs: readonly string[] },
  { resource }: SyncInput<ProcessConfigs, ProcessOutput, ProcessData>,
  ctx: SyncContext,
): Promise<ObserveResult<ProcessConfigs, ProcessOutput, ProcessData>> {
  if (!hasProcfs())
    throw new Error('the process module needs Linux /proc to tell its processes from others');
  const dir = resourceDir(runDir, resource);
  const configs = resource.spec.configs;
  const adopted = resource.state.data?.adopted;
  // An adopted process is looked at by its identity; the pid file is read only to adopt one.
  const adopting =
    configs.pid_file !== undefined && ['import', 'create'].includes(resource.state.action);
  if (adopted || adopting) {
    const identity = adopted
      ? isSameProcess(adopted)
        ? adopted
        : undefined
      : await readPidFile(configs.pid_file!, pidDirs);
    if (!identity) return { exists: false };
    const launch = launchOf(identity.pid, configs);
    const owner = resource.state.data?.owner;
    return {
      exists: true,
      configs: { replicas: 1, stopped: false, ...launch },
      output: adoptedOutput(identity, launch.command ?? configs.command, dir),
      data: { pending: [], ...(owner ? { owner } : {}), adopted: identity },
    };
  }
  const stored = await loadRecords(dir);
  const hasRecords = await access(join(dir, RECORDS_FILE)).then(
    () => true,
    () => false,
  );
  const at = ctx.now().toISOString();
  // Seen as sync would see them, in memory only: a replica that ended shows as exited.
  const records: ReplicaRecords = {
    ...stored,
    replicas: stored.replicas.map((record) =>
      record.exited || isSameProcess(record)
        ? record
        : { ...record, exited: { at, exit_code: null, signal: null } },
    ),
  };
  const live = records.replicas.filter((record) => !record.exited);
  const desired = configs.stopped ? 0 : (configs.replicas ?? 1);
  const exists = live.length > 0 || (hasRecords && desired === 0);
  if (!exists) return { exists: false };
  const marker = await readOwner(dir);
  return {
    exists: true,
    configs: live.length
      ? { replicas: live.length, stopped: false, ...launchOf(live[0]!.pid, configs) }
      : {},
    output: describe(resource, records, undefined, desired, dir),
    data:
      typeof marker?.owner === 'string' ? { pending: [], owner: marker.owner } : { pending: [] },
  };
}

/**
 * `command` and `args` from the command line. Steward starts a program with the resolved path as
 * argv[0], so a bare `command` is reported as written when the program is that name.
 */
function launchOf(pid: number, configs: ProcessConfigs): Partial<ProcessConfigs> {
  const argv = readCommandLine(pid);
  if (!argv?.length) return {};
  const [program, ...args] = argv as [string, ...string[]];
  const bare = configs.command !== undefined && !configs.command.includes('/');
  const command = bare && basename(program) === configs.command ? configs.command : program;
  return { command, args };
}
