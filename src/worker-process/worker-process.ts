import { type ChildProcess, fork } from 'node:child_process';
import { availableParallelism } from 'node:os';

import type { Config } from '../config.js';
import type { StoreSignals } from '../core/ports.js';
import type { SyncObserver } from '../core/sync/sync-observer.js';
import { relayOwnCommits } from './commit-relay.js';
import type { FromWorker, ToWorker } from './messages.js';

/**
 * `serve`'s sync worker in a process of its own (`steward worker --attached`, attached-worker.ts),
 * as `serve` sees it: the API keeps one core, the worker's syncs run on another (issue 18,
 * docs/decisions.md "serve starts its worker as a second process"). The two share the database
 * and an IPC channel: each tells the other of its commits, so neither waits for a poll, and the
 * worker's sync metrics are counted on `serve`'s /metrics.
 */
export interface WorkerProcess {
  readonly pid: number | undefined;
  /** Wires the channel to this process's store signals and sync metrics (createSteward calls it). */
  attach(parts: {
    signals: Pick<StoreSignals, 'onOwnCommit' | 'relayCommit'>;
    observer: SyncObserver;
  }): void;
  /**
   * Starts the worker's loops; resolves once they run, rejects if the process ends first. Once
   * `stop()` has begun it asks nothing and resolves: a stop during start-up is no failure.
   */
  start(): Promise<void>;
  /**
   * SIGTERM: the worker drains within its grace period, gives back its leases and exits. Resolves
   * when it has; rejects if it exited with a failure (its drain failed, or it had died already).
   */
  stop(): Promise<void>;
  /** A webhook was made or a delivery queued again: the worker's delivery loop looks now. */
  wakeDelivery(): void;
  /** Started and not ended (/readyz's worker check). */
  isRunning(): boolean;
  /** Its syncs in flight, as of its last message (`steward_active_workers`). */
  inFlight(): number;
  /** `listener` runs once if the process ends when it was not asked to stop. */
  onUnexpectedExit(listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
}

/**
 * Whether `serve` starts its worker as a second process: STEWARD_WORKER_PROCESS, `auto` with two
 * cores or more. Never on `:memory:`, a database each process would have to itself.
 */
export function workerInOwnProcess(
  config: Pick<Config, 'workerProcess' | 'db'>,
  cores = availableParallelism(),
): boolean {
  if (config.db === ':memory:') return false;
  return config.workerProcess === 'auto' ? cores >= 2 : config.workerProcess;
}

/**
 * Forks `cli worker --attached` at once, so it loads its modules while this process loads its
 * own; it starts its loops only when `start()` says the API listens. Its output goes where this
 * process's goes. Should this process die, the worker notices its channel close and exits.
 *
 * In a session and process group of its own (`detached`: setsid): a terminal's Ctrl-C (SIGINT to
 * the foreground group) reaches this process alone, which stops the worker as it stops (and a
 * Ctrl-Z suspends this process alone: the worker goes on syncing meanwhile). In this group it
 * reached the worker too, and during start-up, before the worker had set its handlers, killed it:
 * `serve` then reported its worker dead and exited 1.
 */
export function forkWorkerProcess(cli: string): WorkerProcess {
  const child: ChildProcess = fork(cli, ['worker', '--attached'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    detached: true,
  });
  let started = false;
  let stopping = false;
  let inFlight = 0;
  let parts: Parameters<WorkerProcess['attach']>[0] | undefined;
  let unexpected: Parameters<WorkerProcess['onUnexpectedExit']>[0] | undefined;
  let startedNow: (() => void) | undefined;
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // A fork that fails (no such file, no memory) ends it the same way; a message that could not
    // be sent is no end (the channel closes with the process, and 'exit' follows).
    child.on('error', () => {
      if (child.pid === undefined) resolve({ code: null, signal: null });
    });
  });
  let exited = false;
  // This process ending any way at all (start-up failed, an error): the worker goes with it at once.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  void ended.then(({ code, signal }) => {
    process.off('exit', killOnExit);
    exited = true;
    if (!stopping) unexpected?.(code, signal);
  });
  const send = (message: ToWorker) => {
    if (child.connected) child.send(message);
  };
  child.on('message', (message: FromWorker) => {
    switch (message.type) {
      case 'started':
        started = true;
        startedNow?.();
        return;
      case 'commit':
        parts?.signals.relayCommit(message);
        return;
      case 'synced':
        inFlight = message.inFlight;
        for (const waits of message.claimed) parts?.observer.claimed(waits);
        for (const [kind, result, seconds] of message.synced)
          parts?.observer.synced(kind, result, seconds);
    }
  });
  return {
    get pid() {
      return child.pid;
    },
    attach(attached) {
      parts = attached;
      relayOwnCommits(attached.signals, send);
    },
    async start() {
      if (stopping) return;
      const running = new Promise<void>((resolve) => (startedNow = resolve));
      send({ type: 'start' });
      await Promise.race([
        running,
        ended.then(({ code, signal }) => {
          if (stopping) return;
          throw new Error(
            `the worker process ended before it started (${signal ?? `exit code ${code}`}); its lines above say why`,
          );
        }),
      ]);
    },
    async stop() {
      stopping = true;
      if (!exited) child.kill('SIGTERM');
      const { code, signal } = await ended;
      // Killed by the signal itself: it came before the worker had set its handlers (start-up).
      if (code !== 0 && signal !== 'SIGTERM' && signal !== 'SIGINT')
        throw new Error(`the worker process ended with ${signal ?? `exit code ${code}`}`);
    },
    wakeDelivery: () => send({ type: 'wake-delivery' }),
    isRunning: () => started && !exited,
    inFlight: () => (exited ? 0 : inFlight),
    onUnexpectedExit(listener) {
      unexpected = listener;
    },
  };
}
