import { Worker } from 'node:worker_threads';

/**
 * WAL checkpoints off the main thread. SQLite's automatic checkpoint runs inside
 * the COMMIT that crosses the threshold and, with better-sqlite3 being synchronous,
 * stalls the whole process for a few milliseconds several times a second under
 * write load (the GET tail in docs/benchmarks.md). The main connection turns the
 * automatic checkpoint off; this worker thread, with its own connection, runs a
 * PASSIVE checkpoint (never blocks writers or readers) every `intervalMs`.
 */
export function startCheckpointer(file: string, intervalMs = 200): () => Promise<void> {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads');
    const Database = require(workerData.driver);
    const db = new Database(workerData.file, { timeout: 1000 });
    const timer = setInterval(() => {
      try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy or closed: the next tick tries again */ }
    }, workerData.intervalMs);
    parentPort.on('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
    `,
    { eval: true, workerData: { file, intervalMs, driver: require_resolve('better-sqlite3') } },
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
  return import.meta.resolve(name).replace(/^file:\/\//, '');
}
