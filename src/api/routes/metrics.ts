import { Router } from 'express';

/** The Prometheus exposition, rendered at scrape time. */
export interface MetricsEndpoint {
  contentType: string;
  render(): Promise<string>;
}

/** GET /metrics, outside the API prefix (query parameters are ignored: scrapers may add their own). */
export function metricsRoutes(metrics: MetricsEndpoint): Router {
  const router = Router();
  router.get('/metrics', async (_req, res) => {
    const body = await metrics.render();
    res.setHeader('Content-Type', metrics.contentType);
    res.send(body);
  });
  return router;
}
