import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * The WAL size at which the thread starts. Starting a thread costs about 0.1 s of CPU (a Node
 * isolate, better-sqlite3 loaded again), which a short-lived or little-written Steward never
 * needs: a CLI `serve` in a test, one of npm test's hundreds. Until then the main thread only looks
 * at the WAL's size (once a second by default), and the WAL holds at most this much that is not
 * copied back, plus what was written since the last look.
 */
const START_BYTES = 1024 * 1024;
/** Before the thread starts, the WAL's size is looked at once in this many checkpoint intervals. */
const LOOK_INTERVALS = 5;

/**
 * WAL checkpoints off the main thread. SQLite's automatic checkpoint runs inside
 * the COMMIT that crosses the threshold and, with better-sqlite3 being synchronous,
 * stalls the whole process for a few milliseconds several times a second under
 * write load (the GET tail in docs/benchmarks.md). The main connection turns the
 * automatic checkpoint off; this worker thread, with its own connection, runs a
 * PASSIVE checkpoint (never blocks writers or readers) every `intervalMs`, when the WAL file
 * changed since the last one: an idle Steward takes no lock five times a second.
 *
 * PASSIVE alone does not bound the WAL under sustained writes: SQLite starts the WAL again from
 * its beginning only at a write that finds every frame copied back, and with a write every few
 * milliseconds the next one has always appended more first, so the file grew without end
 * (1.2 GB after 30,000 writes in the schedules bench), and the first write that did restart it
 * spent 1.5 s in its COMMIT cutting the file back to `journal_size_limit`. So once the WAL holds
 * `restartFrames` frames, the checkpoint is a RESTART: it copies what PASSIVE left (little, a
 * PASSIVE ran just before) while holding the write lock, waits for readers to leave the WAL,
 * and the next write starts the file again from its beginning, overwriting it in place.
 *
 * The thread starts once the WAL holds `startBytes` (START_BYTES); 0 starts it at once. Until then
 * the main thread looks at the WAL's size every `LOOK_INTERVALS` intervals (a second by default):
 * each look wakes an idle process, and a wake after a quiet spell costs 0.1–0.3 ms of CPU where
 * the same work in a busy loop takes 5 µs (docs/decisions.md, "An idle Steward wakes half as
 * often"). The WAL may grow by a second's writes past `startBytes` before the thread starts;
 * from then on it looks every interval.
 */
export function startCheckpointer(
  file: string,
  intervalMs = 200,
  restartFrames = 8192,
  startBytes = START_BYTES,
): () => Promise<void> {
  if (startBytes <= 0) return startThread(file, intervalMs, restartFrames);
  let stopThread: (() => Promise<void>) | undefined;
  const watch = setInterval(() => {
    try {
      const wal = statSync(`${file}-wal`, { throwIfNoEntry: false });
      if (!wal || wal.size < startBytes) return;
    } catch {
      return; // unreadable for now (as in the thread): the next look tries again
    }
    clearInterval(watch);
    stopThread = startThread(file, intervalMs, restartFrames);
  }, intervalMs * LOOK_INTERVALS);
  watch.unref();
  return async () => {
    clearInterval(watch);
    await stopThread?.();
  };
}

/** The checkpointer's thread; the function returned stops it. */
function startThread(file: string, intervalMs: number, restartFrames: number) {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads');
    const { statSync } = require('node:fs');
    const Database = require(workerData.driver);
    const db = new Database(workerData.file, { timeout: 1000 });
    let checkpointed = '';
    const timer = setInterval(() => {
      try {
        const wal = statSync(workerData.file + '-wal', { throwIfNoEntry: false });
        const seen = wal ? wal.size + ':' + wal.mtimeMs : '';
        if (seen === checkpointed) return;
        let [result] = db.pragma('wal_checkpoint(PASSIVE)');
        if (result && result.log >= workerData.restartFrames) [result] = db.pragma('wal_checkpoint(RESTART)');
        // Looked at again next tick unless every frame was copied back (a reader held some).
        if (result && result.busy === 0 && result.log === result.checkpointed) checkpointed = seen;
      } catch { /* busy or closed: the next tick tries again */ }
    }, workerData.intervalMs);
    parentPort.on('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
    `,
    {
      eval: true,
      workerData: { file, intervalMs, restartFrames, driver: require_resolve('better-sqlite3') },
    },
  );
  // A thread that fails (its driver not found, say) must not take the process with it: said on stderr.
  worker.on('error', (err) =>
    process.emitWarning(`the SQLite WAL checkpointer's thread failed: ${err.message}`),
  );
  worker.unref();
  return async () => {
    worker.ref(); // keep the process alive until the checkpointer has closed its connection
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('stop');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      exited,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, 1000))),
    ]);
    clearTimeout(timer);
    await worker.terminate();
  };
}

function require_resolve(name: string): string {
  return fileURLToPath(import.meta.resolve(name)); // decoded: a path with a space or non-ASCII letters
}
