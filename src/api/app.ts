import { randomUUID } from 'node:crypto';

import express, { type Express, type RequestHandler } from 'express';

import type { AuditQueries } from '../core/audit/audit-queries.js';
import type { EventFeed } from '../core/events/event-feed.js';
import type { CoreLogger } from '../core/logging.js';
import type { Registry } from '../core/modules/registry.js';
import type { ApplyCommand } from '../core/requests/apply-command.js';
import type { IdempotencyKeys } from '../core/requests/idempotency-keys.js';
import type { Limits } from '../core/requests/limits.js';
import type { LogReader } from '../core/requests/logs.js';
import type { OperationCommands } from '../core/requests/operation-commands.js';
import type { Queries } from '../core/requests/queries.js';
import type { ResourceCommands } from '../core/requests/resource-commands.js';
import type { ScheduleCommands } from '../core/schedules/schedule-commands.js';
import type { SecretReads } from '../core/secrets/secret-reads.js';
import type { WebhookCommands } from '../core/webhooks/webhook-commands.js';
import { installAnswerHooks } from './answered.js';
import type { AccessControl } from './auth/access-control.js';
import { auditErrors } from './auth/audit.js';
import { jsonBody } from './body.js';
import { chain } from './chain.js';
import { errorHandler, notFoundHandler } from './http-errors.js';
import { idempotencyKeys } from './idempotency.js';
import { methodNotAllowed } from './method-not-allowed.js';
import { mounted } from './mount.js';
import { openApiDocument, openApiRoute } from './openapi/route.js';
import { API_PREFIX } from './prefix.js';
import { type HttpObserver, requestMetrics } from './request-metrics.js';
import { serveRoutes } from './route-table.js';
import { applyRoutes } from './routes/apply.js';
import { auditRoutes } from './routes/audit.js';
import { consoleRoutes } from './routes/console.js';
import { eventRoutes } from './routes/events.js';
import { healthRoutes, type Readiness } from './routes/health.js';
import { logRoutes } from './routes/logs.js';
import { type MetricsEndpoint, metricsRoutes } from './routes/metrics.js';
import { moduleRoutes } from './routes/modules.js';
import { operationRoutes } from './routes/operations.js';
import { resourceRoutes } from './routes/resources.js';
import { scheduleRoutes } from './routes/schedules.js';
import { secretRoutes } from './routes/secrets.js';
import { webhookRoutes } from './routes/webhooks.js';
import { whoamiRoutes } from './routes/whoami.js';
import type { BodyValidator } from './schemas.js';
import { securityHeaders } from './security-headers.js';

export interface AppDeps {
  commands: ResourceCommands;
  /** PUT /resources/{urn}: create or update to exactly the body (docs/design.md §13). */
  apply: ApplyCommand;
  /** POST /operations/{id}/cancel. */
  operationCommands: OperationCommands;
  /** The schedules endpoints (docs/design.md §10). */
  schedules: ScheduleCommands;
  /** The webhooks endpoints (docs/webhooks.md). */
  webhooks: WebhookCommands;
  queries: Queries;
  /** GET /resources/{urn}/secrets: the admin's read of secret outputs. */
  secrets: SecretReads;
  registry: Registry;
  schemas: BodyValidator;
  readiness: Readiness;
  logger: CoreLogger;
  openLogs: LogReader;
  /** GET /events: the watch, and its heartbeat interval (STEWARD_EVENTS_HEARTBEAT_MS). */
  events: { feed: EventFeed; heartbeatMs: number };
  /** GET /metrics, and where every request is counted. */
  metrics: { endpoint: MetricsEndpoint; http: HttpObserver };
  /** Who may call what: authentication, rate limit and audit in front of the API and /metrics (auth/access-control.ts). */
  access: AccessControl;
  /** What one request may be (core/requests/limits.ts): the body size and depth are checked here, the rest by core. */
  limits: Limits;
  /** GET /audit: the audit table (core/audit/). */
  audit: AuditQueries;
  /** false: only /healthz and /readyz (a worker-only process). @default true */
  serveApi?: boolean;
  /** Idempotency-Key on every write of the API (docs/api.md "Idempotency keys"). */
  idempotency: IdempotencyKeys;
}

/** The HTTP API of docs/design.md §8 as an express app (no listening; the caller decides where). */
export function createApp({
  commands,
  apply,
  operationCommands,
  schedules,
  webhooks,
  queries,
  secrets,
  registry,
  schemas,
  readiness,
  logger,
  openLogs,
  events,
  metrics,
  access,
  limits,
  audit,
  serveApi = true,
  idempotency,
}: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  installAnswerHooks(app);
  const document = openApiDocument(registry, schemas, access.mode);
  // The API is mounted inside the first chain (mount.ts): its requests, nearly all of them, pass one
  // layer of express's router, and no other router's. Its routes are one table (route-table.ts); the
  // paths do not overlap the probes', the console's or /metrics'.
  const api =
    serveApi &&
    mounted(
      API_PREFIX,
      chain([
        ...access.guard,
        ...jsonBody(limits),
        // Every write route of the table takes Idempotency-Key (idempotency.ts says how one stores its answer).
        idempotencyKeys(idempotency),
        serveRoutes([
          resourceRoutes(commands, queries, schemas, limits),
          applyRoutes(apply, queries, schemas),
          secretRoutes(secrets),
          logRoutes(openLogs),
          operationRoutes(queries, operationCommands),
          scheduleRoutes(schedules, schemas),
          webhookRoutes(webhooks, schemas),
          moduleRoutes(registry),
          eventRoutes(events.feed, events.heartbeatMs, logger),
          auditRoutes(audit),
          whoamiRoutes(),
        ]),
      ]),
    );
  app.use(
    chain([
      securityHeaders,
      requestLog(logger),
      requestMetrics(metrics.http),
      methodNotAllowed(() => servedPaths(document().paths, serveApi)),
      ...(api ? [api] : []),
    ]),
  );
  // Probes and the API's own description stay public; /metrics and the API need a token (when tokens are configured).
  app.use(healthRoutes(readiness));
  if (serveApi) app.get('/openapi.json', openApiRoute(document));
  // The console's static files are public (they hold no data); the API behind them needs the token.
  if (serveApi) app.use(consoleRoutes());
  app.use('/metrics', access.metricsGuard);
  app.use(metricsRoutes(metrics.endpoint));
  app.use(notFoundHandler);
  app.use(auditErrors);
  app.use(errorHandler(logger));
  return app;
}

/** The documented paths this process serves: a worker-only one serves the probes and /metrics alone. */
function servedPaths(paths: Record<string, object>, serveApi: boolean): Record<string, object> {
  if (serveApi) return paths;
  return Object.fromEntries(
    Object.entries(paths).filter(
      ([path]) => !path.startsWith(API_PREFIX) && path !== '/openapi.json',
    ),
  );
}

/** A request id on every answer, and one log line per request (mutations at info, reads at debug). */
function requestLog(logger: CoreLogger): RequestHandler {
  const log = logger.child({ component: 'api' });
  return (req, res, next) => {
    const startedAt = process.hrtime.bigint();
    const given = req.headers['x-request-id'];
    const requestId =
      typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    res.on('finish', () => {
      const fields = {
        requestId,
        method: req.method,
        path: req.originalUrl.split('?')[0],
        status: res.statusCode,
        durationMs: Number(process.hrtime.bigint() - startedAt) / 1e6,
      };
      if (req.method === 'GET' || req.method === 'HEAD') log.debug('request served', fields);
      else log.info('request served', fields);
    });
    next();
  };
}
