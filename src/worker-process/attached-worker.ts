import { Worker } from 'node:worker_threads';

import type { SyncObserver } from '../core/sync/sync-observer.js';
import type { Steward } from '../steward.js';
import { stopOnSignals } from '../stop-on-signals.js';
import { relayOwnCommits } from './commit-relay.js';
import type { FromWorker, ToWorker } from './messages.js';

const ignore = () => undefined;

/** How often the worker looks whether its syncs in flight changed since its last message. */
const IN_FLIGHT_LOOK_MS = 1000;
/** How often the watchdog thread looks whether `serve` is still this process's parent. */
const PARENT_LOOK_MS = 1000;

/**
 * The worker process `serve` started (`steward worker --attached`; the other side is
 * worker-process.ts): builds a Steward with `create`, listens on no port, starts its loops when
 * `serve` says its API listens, and relays commits and sync metrics over the IPC channel. SIGTERM
 * or SIGINT drains it as `steward worker` drains. Should `serve` die, the channel closes and this
 * process exits at once (or, its event loop blocked, is killed by its watchdog thread): a crash of
 * `serve` is a crash of its worker, as when both ran in one process, and the next `serve` starts a
 * new one.
 */
export async function runAttachedWorker(
  create: (observer: SyncObserver) => Promise<Steward>,
): Promise<void> {
  if (!process.send)
    throw new Error('steward worker --attached is started by steward serve, over an IPC channel');
  // Checked too: `serve` may have ended while this process loaded, before the listener was added.
  process.once('disconnect', () => process.exit(1));
  if (!process.connected) process.exit(1);
  dieWithParent();
  // With a callback, a send that fails (serve died, the channel not yet seen closed) is no uncaught error.
  const send = (message: FromWorker) => {
    if (process.connected) process.send!(message, undefined, undefined, ignore);
  };
  // `serve` may say start, or relay a commit, while this process still loads its modules.
  const built: { steward?: Steward } = {};
  let startAsked = false;
  let stopping = () => false;
  const start = (steward: Steward) => {
    // SIGTERM and serve's 'start' may cross on the way: once stopping, nothing starts.
    if (stopping()) return;
    steward.startWorker();
    steward.logger.info('worker process started', {
      pid: process.pid,
      kinds: steward.registry.kinds(),
    });
    send({ type: 'started' });
  };
  process.on('message', (message: ToWorker) => {
    if (message.type === 'commit') built.steward?.store.relayCommit(message);
    else if (message.type === 'wake-delivery') built.steward?.webhookDelivery.wake();
    else if (built.steward) start(built.steward);
    else startAsked = true;
  });
  const steward = await create(forwardSyncs(send, () => built.steward?.engine.inFlight() ?? 0));
  built.steward = steward;
  relayOwnCommits(steward.store, send);
  stopping = stopOnSignals(steward);
  if (startAsked) start(steward);
}

/**
 * The sync engine's observer, sent to `serve`: the calls of one loop turn in one message, with
 * the syncs in flight. While that count is not 0, a look each second sends it again once it has
 * changed (the last sync of a burst may leave the engine after its message).
 */
function forwardSyncs(send: (message: FromWorker) => void, inFlight: () => number): SyncObserver {
  let claimed: number[][] = [];
  let synced: Array<[string, Parameters<SyncObserver['synced']>[1], number]> = [];
  let scheduled = false;
  let sentInFlight = 0;
  let look: NodeJS.Timeout | undefined;
  const flush = () => {
    scheduled = false;
    sentInFlight = inFlight();
    send({ type: 'synced', claimed, synced, inFlight: sentInFlight });
    claimed = [];
    synced = [];
    if (sentInFlight > 0) look ??= setTimeout(lookAgain, IN_FLIGHT_LOOK_MS).unref();
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };
  // Only while a sync was in flight at the last message: an idle worker sets no timer.
  const lookAgain = () => {
    look = undefined;
    if (inFlight() !== sentInFlight) schedule();
    else look = setTimeout(lookAgain, IN_FLIGHT_LOOK_MS).unref();
  };
  return {
    claimed(waitsMs) {
      claimed.push(Array.from(waitsMs));
      schedule();
    },
    synced(kind, result, seconds) {
      synced.push([kind, result, seconds]);
      schedule();
    },
  };
}

/**
 * A module call that blocks the event loop (a busy loop, a synchronous wait) keeps 'disconnect'
 * from running, and this process would outlive its `serve` until the call returned. A thread
 * looks at the parent pid instead, and once `serve` is gone (this process re-parented) ends the
 * process with SIGKILL, which needs no help from the blocked thread.
 */
function dieWithParent(): void {
  new Worker(
    `const { workerData } = require('node:worker_threads');
setInterval(() => {
  if (process.ppid !== workerData.parent) process.kill(workerData.self, 'SIGKILL');
}, workerData.everyMs);`,
    {
      eval: true,
      workerData: { parent: process.ppid, self: process.pid, everyMs: PARENT_LOOK_MS },
    },
  ).unref();
}
