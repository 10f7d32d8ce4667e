import { Worker } from 'node:worker_threads';

import type { LoadPlan, LoadResult } from './load-client.js';

/** Runs a load plan in a worker thread (its own event loop, on the machine's other core). */
export function runLoad(plan: LoadPlan): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./load-client.js', import.meta.url), { workerData: plan });
    let answered = false;
    worker.once('message', (result: LoadResult) => {
      answered = true;
      resolve(result);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (!answered) reject(new Error(`load client exited with code ${code} before answering`));
    });
  });
}
