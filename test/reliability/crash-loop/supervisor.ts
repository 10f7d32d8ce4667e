import { type ChildSteward, spawnSteward } from '../../helpers/child-steward.js';

export interface KilledProcess {
  pid: number;
  /** Epoch ms once its exit was seen: nothing of it can appear in the ledger after this. */
  deadAtMs: number;
}

/**
 * One Steward child process at a time on the same database, killed with SIGKILL and
 * started again. Clients ask `api()` for the live process and wait while there is none,
 * so a request either reaches a process or dies with it.
 */
export function createCrashSupervisor(env: Record<string, string>) {
  let current: ChildSteward | undefined;
  const waiting: Array<{ resolve: (api: string) => void; reject: (err: Error) => void }> = [];
  let closed = false;
  const killed: KilledProcess[] = [];
  /** Log lines at level error, from every process: there should be none. */
  const errorLines: string[] = [];
  const pids: number[] = [];
  /** How long each start took, spawn to "steward started". */
  const startMs: number[] = [];

  function collectErrors(child: ChildSteward): void {
    for (const line of child.output.join('').split('\n')) {
      if (line.includes('"level":"error"')) errorLines.push(`pid ${child.proc.pid}: ${line}`);
    }
  }

  return {
    killed,
    errorLines,
    pids,
    startMs,

    /** The live process's API base URL (…/api/v1beta1). */
    api(): Promise<string> {
      if (closed) return Promise.reject(new SupervisorClosed());
      if (current) return Promise.resolve(current.api);
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },

    async start(): Promise<ChildSteward> {
      if (closed) throw new SupervisorClosed();
      if (current) throw new Error('a Steward process is already running');
      const spawnedAt = Date.now();
      const child = await spawnSteward(env);
      startMs.push(Date.now() - spawnedAt);
      pids.push(child.proc.pid!);
      if (child.workerPid !== undefined) pids.push(child.workerPid);
      if (closed) {
        await child.stop('SIGKILL');
        throw new SupervisorClosed();
      }
      current = child;
      for (const waiter of waiting.splice(0)) waiter.resolve(child.api);
      return child;
    },

    /** kill -9 of the live process; resolves once it has exited. */
    async kill(): Promise<KilledProcess> {
      const child = current;
      if (!child) throw new Error('no Steward process to kill');
      current = undefined;
      // Resolves once its worker process (STEWARD_WORKER_PROCESS) has ended too: by itself, as it
      // does when serve dies. Both are dead from then on: a ledger line of either after it is late.
      await child.stop('SIGKILL');
      const dead = { pid: child.proc.pid!, deadAtMs: Date.now() };
      killed.push(dead);
      if (child.workerPid !== undefined)
        killed.push({ pid: child.workerPid, deadAtMs: dead.deadAtMs });
      collectErrors(child);
      return dead;
    },

    /** SIGTERM to the live process (the graceful shutdown); resolves with its exit code. */
    async stop(): Promise<number | null> {
      const child = current;
      if (!child) return null;
      current = undefined;
      const code = await child.stop('SIGTERM');
      collectErrors(child);
      return code;
    },

    /** For afterEach: whatever still runs is killed; clients waiting for a process, and a loop still going after a timeout, are told it is over. */
    async cleanUp(): Promise<void> {
      closed = true;
      const child = current;
      current = undefined;
      for (const waiter of waiting.splice(0)) waiter.reject(new SupervisorClosed());
      if (child) await child.stop('SIGKILL');
    },
  };
}

/** What `api()` rejects with once the test is cleaning up. */
export class SupervisorClosed extends Error {
  constructor() {
    super('the crash loop is over');
  }
}

export type CrashSupervisor = ReturnType<typeof createCrashSupervisor>;
