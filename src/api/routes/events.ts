import { once } from 'node:events';

import type { Response } from 'express';

import { InvalidRequestError, StewardError } from '../../core/errors.js';
import type { EventFeed } from '../../core/events/event-feed.js';
import type { CoreLogger } from '../../core/logging.js';
import type { EventRecord } from '../../core/model.js';
import { projectsOf } from '../../core/requests/scope.js';
import { callerOf } from '../auth/caller.js';
import { errorBody } from '../http-errors.js';
import { parseKindFilter, parseNameFilter, parseUrnFilter, queryOf } from '../request-parsing.js';
import { RouteTable } from '../route-table.js';

/**
 * GET /events: server-sent events from the durable events table. The stream opens
 * with a bare `id:` line (the resume point, so a client that sees no event can
 * still resume), then one frame per event, and a `: heartbeat` comment every
 * `heartbeatMs`. `Last-Event-ID` wins over `?since=`: a browser's EventSource
 * reconnects to its first URL with the newer header.
 */
export function eventRoutes(feed: EventFeed, heartbeatMs: number, logger: CoreLogger): RouteTable {
  const log = logger.child({ component: 'api' });
  const routes = new RouteTable();
  routes.get('/events', async (req, res) => {
    const q = queryOf(req, ['project', 'kind', 'urn', 'since']);
    const given = req.headers['last-event-id'];
    const header = Array.isArray(given) ? given.join(', ') : given;
    const since = header
      ? parseEventId('Last-Event-ID', header)
      : q.since !== undefined
        ? parseEventId('since', q.since)
        : undefined;
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    // The caller's projects are part of the filter: the store never reads another project's events for this watch.
    const projects = projectsOf(callerOf(res).scope);
    const watch = await feed.open(
      {
        project: parseNameFilter('project', q.project),
        kind: parseKindFilter(q.kind),
        urn: parseUrnFilter(q.urn),
        projects,
      },
      since,
      controller.signal,
    );
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('X-Accel-Buffering', 'no');
    // A watch is long-lived: the connection ends with it, so shutdown never waits on an idle keep-alive.
    res.setHeader('Connection', 'close');
    res.flushHeaders();
    res.write(`id: ${watch.startId}\n\n`);
    const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), heartbeatMs);
    try {
      for await (const event of watch.events) await send(res, eventFrame(event), watch.signal);
    } catch (err) {
      // An AbortError is a write given up because the client left or Steward is stopping: nothing to report.
      if (!controller.signal.aborted && (err as Error)?.name !== 'AbortError') {
        // Headers are out: report the failure as a last frame; the client resumes with Last-Event-ID.
        if (!(err instanceof StewardError))
          log.error('event stream failed', {
            requestId: res.locals.requestId,
            error: (err as Error)?.stack ?? String(err),
          });
        res.write(errorFrame(err));
      }
    } finally {
      clearInterval(heartbeat);
      res.end();
    }
  });
  return routes;
}

function parseEventId(name: string, raw: string): number {
  if (!/^\d{1,15}$/.test(raw))
    throw new InvalidRequestError(
      `${name} must be an event id: a whole number from 0 to 999999999999999`,
    );
  return Number(raw);
}

function eventFrame(event: EventRecord): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

function errorFrame(err: unknown): string {
  const body =
    err instanceof StewardError
      ? errorBody(err.code, err.message, err.details)
      : errorBody('internal', 'the event stream failed; it is logged with this request id');
  return `event: error\ndata: ${JSON.stringify(body)}\n\n`;
}

/** Writes with backpressure; gives up when the client goes away. */
async function send(res: Response, frame: string, signal: AbortSignal): Promise<void> {
  if (!res.write(frame)) await once(res, 'drain', { signal });
}
