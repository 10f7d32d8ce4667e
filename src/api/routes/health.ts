import { Router } from 'express';

export interface Readiness {
  /** Resolves when the database answers and is migrated. */
  database(): Promise<void>;
  /** null when this process runs no worker. */
  workerRunning(): boolean | null;
}

/** /healthz: the process answers. /readyz: the database answers and the worker runs (when enabled). */
export function healthRoutes(readiness: Readiness): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const checks: Record<string, string> = {};
    try {
      await readiness.database();
      checks.database = 'ok';
    } catch (err) {
      checks.database = (err as Error).message;
    }
    const worker = readiness.workerRunning();
    if (worker !== null) checks.worker = worker ? 'ok' : 'stopped';
    const ready = Object.values(checks).every((value) => value === 'ok');
    res
      .status(ready ? 200 : 503)
      .json(
        ready
          ? { status: 'ready', checks }
          : { error: { code: 'unavailable', message: 'not ready', details: checks } },
      );
  });
  return router;
}
