import type { Response } from 'express';

import { formatUrn } from '../../core/names.js';
import type { Accepted } from '../../core/requests/command-types.js';
import type { Limits } from '../../core/requests/limits.js';
import type { Queries } from '../../core/requests/queries.js';
import type { ResourceCommands } from '../../core/requests/resource-commands.js';
import { noteAudit } from '../auth/audit.js';
import { authorizeCreate, authorizeResource, NEEDS, requireRole } from '../auth/authorize.js';
import { callerOf } from '../auth/caller.js';
import { keyAwaitsAnswer, settleKey } from '../idempotency.js';
import {
  parseCreateBody,
  parseDryRun,
  parseFlag,
  parseKindFilter,
  parseLabelFilter,
  parseNameFilter,
  parsePageSize,
  parseStatus,
  parseUpdateBody,
  queryOf,
  requestOptions,
} from '../request-parsing.js';
import { RouteTable } from '../route-table.js';
import type { BodyValidator } from '../schemas.js';
import { sendJsonText } from '../send-json.js';
import { sendPage } from '../send-page.js';
import { acceptedAnswer } from './accepted-answer.js';
import { pauseRoutes, sendCascade } from './day-two.js';
import { dryRunAnswer } from './dry-run-answer.js';
import { mayChange, optionsRoute } from './resource-options.js';

export function resourceRoutes(
  commands: ResourceCommands,
  queries: Queries,
  schemas: BodyValidator,
  limits: Pick<Limits, 'labels'>,
): RouteTable {
  const routes = new RouteTable();

  routes.post('/resources', async (req, res) => {
    const { dry_run } = queryOf(req, ['dry_run']);
    const caller = callerOf(res);
    requireRole(caller, NEEDS.change, 'create resources');
    const request = parseCreateBody(schemas, req.body);
    noteAudit(res, { project: request.project, urn: formatUrn(request) });
    authorizeCreate(caller, request.project);
    sendAccepted(
      res,
      await commands.create(request, requestOptions(req, caller, parseDryRun(dry_run))),
    );
  });

  routes.get('/resources', async (req, res) => {
    const q = queryOf(req, [
      'project',
      'kind',
      'status',
      'paused',
      'labels',
      'page_size',
      'page_token',
    ]);
    const page = await queries.listResources(
      {
        project: parseNameFilter('project', q.project),
        kind: parseKindFilter(q.kind),
        status: parseStatus(q.status),
        paused: parseFlag('paused', q.paused),
        labels: parseLabelFilter(q.labels, limits.labels),
      },
      parsePageSize(q.page_size),
      q.page_token,
      callerOf(res).scope,
      mayChange(callerOf(res)),
    );
    sendPage(res, 'resources', page);
  });

  routes.get('/resources/:urn', async (req, res) => {
    queryOf(req, []);
    const caller = callerOf(res);
    const { version, json } = await queries.getResourceJson(
      req.params.urn,
      caller.scope,
      mayChange(caller),
    );
    res.setHeader('ETag', `"${version}"`);
    sendJsonText(req, res, json);
  });

  routes.patch('/resources/:urn', async (req, res) => {
    const { dry_run } = queryOf(req, ['dry_run']);
    const caller = authorizeResource(res, req.params.urn, NEEDS.change, 'update resources');
    const accepted = await commands.update(
      req.params.urn,
      parseUpdateBody(schemas, req.body),
      requestOptions(req, caller, parseDryRun(dry_run)),
    );
    sendAccepted(res, accepted);
  });

  routes.delete('/resources/:urn', async (req, res) => {
    const q = queryOf(req, ['dry_run', 'orphan', 'cascade']);
    const caller = authorizeResource(res, req.params.urn, NEEDS.change, 'delete resources');
    const options = requestOptions(req, caller, parseDryRun(q.dry_run));
    const removal = { orphan: parseFlag('orphan', q.orphan) };
    if (!parseFlag('cascade', q.cascade)) {
      sendAccepted(res, await commands.remove(req.params.urn, options, removal));
      return;
    }
    sendCascade(res, await commands.removeCascade(req.params.urn, options, removal, caller.scope));
  });

  pauseRoutes(routes, commands);
  optionsRoute(routes, queries);

  routes.post('/resources/:urn/execute', async (req, res) => {
    const { dry_run } = queryOf(req, ['dry_run']);
    const caller = authorizeResource(res, req.params.urn, NEEDS.change, 'run actions');
    const body = schemas.assert<{ action: string; params?: unknown }>('execute.json', req.body);
    noteAudit(res, { moduleAction: body.action });
    sendAccepted(
      res,
      await commands.execute(
        req.params.urn,
        body.action,
        body.params ?? {},
        requestOptions(req, caller, parseDryRun(dry_run)),
      ),
    );
  });

  routes.post('/resources/:urn/actions/:action', async (req, res) => {
    const { dry_run } = queryOf(req, ['dry_run']);
    noteAudit(res, { moduleAction: req.params.action });
    const caller = authorizeResource(res, req.params.urn, NEEDS.change, 'run actions');
    const params =
      req.body === undefined ? {} : schemas.assert<object>('action-params.json', req.body);
    sendAccepted(
      res,
      await commands.execute(
        req.params.urn,
        req.params.action,
        params,
        requestOptions(req, caller, parseDryRun(dry_run)),
      ),
    );
  });

  routes.post('/resources/:urn/retry', async (req, res) => {
    queryOf(req, []);
    const caller = authorizeResource(res, req.params.urn, NEEDS.change, 'retry resources');
    sendAccepted(res, await commands.retry(req.params.urn, requestOptions(req, caller, false)));
  });

  routes.post('/resources/:urn/refresh', async (req, res) => {
    queryOf(req, []);
    const caller = authorizeResource(res, req.params.urn, NEEDS.change, 'refresh resources');
    sendAccepted(res, await commands.refresh(req.params.urn, requestOptions(req, caller, false)));
  });

  routes.get('/resources/:urn/revisions', async (req, res) => {
    const q = queryOf(req, ['page_size', 'page_token']);
    const page = await queries.listRevisions(
      req.params.urn,
      parsePageSize(q.page_size),
      q.page_token,
      callerOf(res).scope,
    );
    sendPage(res, 'revisions', page);
  });

  return routes;
}

/** 202 with the operation's Location; a dry run answers 200 and stores nothing. */
export function sendAccepted(res: Response, accepted: Accepted): void {
  if (accepted.dryRun || accepted.idempotencyRecorded) settleKey(res);
  if (accepted.dryRun) {
    res.setHeader('ETag', `"${accepted.resource.version}"`);
    res.status(200).json(dryRunAnswer(accepted));
    return;
  }
  const { status, headers, body } = acceptedAnswer(accepted);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.status(status);
  // An answer the accept transaction did not store (a delete of one already queued) is stored as it is sent.
  if (keyAwaitsAnswer(res)) res.json(body);
  else sendJsonText(res.req, res, JSON.stringify(body));
}
