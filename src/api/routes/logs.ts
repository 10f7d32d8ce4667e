import { InvalidRequestError } from '../../core/errors.js';
import type { LogReader } from '../../core/requests/logs.js';
import { authorizeResource, NEEDS } from '../auth/authorize.js';
import { queryOf } from '../request-parsing.js';
import { RouteTable } from '../route-table.js';

/**
 * GET /resources/{urn}/logs: newline-delimited JSON, one LogChunk a line;
 * `follow=true` keeps the answer open until the client goes away.
 */
export function logRoutes(openLogs: LogReader): RouteTable {
  const routes = new RouteTable();
  routes.get('/resources/:urn/logs', async (req, res) => {
    const q = queryOf(req, ['follow', 'tail']);
    authorizeResource(res, req.params.urn, NEEDS.read, 'read logs');
    if (q.follow !== undefined && q.follow !== 'true' && q.follow !== 'false')
      throw new InvalidRequestError('follow must be true or false');
    if (q.tail !== undefined && !/^\d{1,6}$/.test(q.tail))
      throw new InvalidRequestError('tail must be a whole number from 0 to 999999');
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    const chunks = await openLogs(req.params.urn, {
      follow: q.follow === 'true',
      tail: q.tail === undefined ? undefined : Number(q.tail),
      signal: controller.signal,
    });
    res.status(200).setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
    res.flushHeaders();
    try {
      for await (const chunk of chunks) {
        if (controller.signal.aborted) break;
        if (!res.write(`${JSON.stringify(chunk)}\n`))
          await new Promise((resolve) => res.once('drain', resolve));
      }
    } catch (err) {
      // Headers are out: report the failure as a last line rather than a broken status.
      if (!controller.signal.aborted)
        res.write(
          `${JSON.stringify({ error: { code: 'internal', message: (err as Error).message } })}\n`,
        );
    }
    res.end();
  });
  return routes;
}
