import type { Steward } from './steward.js';

/**
 * SIGTERM or SIGINT stops `steward` cleanly (drain, release leases) and exits 0, or 1 if the stop
 * failed; a second signal while it stops is ignored. For `serve`, `worker` and the worker process
 * `serve` starts (src/worker-process/attached-worker.ts). Returns whether a signal has come.
 */
export function stopOnSignals(steward: Pick<Steward, 'logger' | 'stop'>): () => boolean {
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    steward.logger.info('shutting down', { signal });
    steward.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        steward.logger.error('shutdown failed', { error: (err as Error).message });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  return () => stopping;
}
