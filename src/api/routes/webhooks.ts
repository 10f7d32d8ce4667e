import type { Response } from 'express';

import type { NewWebhook, WebhookCommands } from '../../core/webhooks/webhook-commands.js';
import { noteAudit } from '../auth/audit.js';
import { requireRole } from '../auth/authorize.js';
import { callerOf } from '../auth/caller.js';
import { PermissionDeniedError } from '../auth/errors.js';
import { API_PREFIX } from '../prefix.js';
import { parsePageSize, queryOf } from '../request-parsing.js';
import { RouteTable } from '../route-table.js';
import type { BodyValidator } from '../schemas.js';
import { sendPage } from '../send-page.js';

/**
 * Webhooks (docs/webhooks.md). Every call needs an admin: of the webhook's project, or of every
 * project for a webhook without one. A webhook the caller's projects do not cover answers as a
 * missing one does, before the role is looked at.
 */
export function webhookRoutes(webhooks: WebhookCommands, schemas: BodyValidator): RouteTable {
  const routes = new RouteTable();

  routes.post('/webhooks', async (req, res) => {
    queryOf(req, []);
    const caller = callerOf(res);
    requireRole(caller, 'admin', 'manage webhooks');
    const body = schemas.assert<NewWebhook>('create-webhook.json', req.body);
    if (body.project !== undefined) noteAudit(res, { project: body.project });
    if (body.project === undefined && caller.scope !== '*')
      throw new PermissionDeniedError(
        `token ${caller.name} may not make a webhook of every project: name its project`,
        { project: null },
      );
    if (body.project !== undefined && caller.scope !== '*' && !caller.scope.includes(body.project))
      throw new PermissionDeniedError(
        `token ${caller.name} may not make webhooks in project ${body.project}`,
        { project: body.project },
      );
    const webhook = await webhooks.create(body, caller.name);
    res.setHeader('Location', `${API_PREFIX}/webhooks/${webhook.id}`);
    res.status(201).json(webhook);
  });

  routes.get('/webhooks', async (req, res) => {
    const q = queryOf(req, ['page_size', 'page_token']);
    const caller = callerOf(res);
    requireRole(caller, 'admin', 'read webhooks');
    const page = await webhooks.list(parsePageSize(q.page_size), q.page_token, caller.scope);
    sendPage(res, 'webhooks', page);
  });

  routes.get('/webhooks/:id', async (req, res) => {
    queryOf(req, []);
    const caller = callerOf(res);
    const webhook = await webhooks.get(req.params.id, caller.scope);
    requireRole(caller, 'admin', 'read webhooks');
    res.json(webhook);
  });

  routes.delete('/webhooks/:id', async (req, res) => {
    queryOf(req, []);
    const caller = callerOf(res);
    noteProject(res, await webhooks.get(req.params.id, caller.scope));
    requireRole(caller, 'admin', 'manage webhooks');
    await webhooks.remove(req.params.id, caller.scope);
    res.status(204).end();
  });

  routes.get('/webhooks/:id/deliveries', async (req, res) => {
    const q = queryOf(req, ['page_size', 'page_token']);
    const caller = callerOf(res);
    await webhooks.get(req.params.id, caller.scope);
    requireRole(caller, 'admin', 'read webhooks');
    const page = await webhooks.deliveries(
      req.params.id,
      parsePageSize(q.page_size),
      q.page_token,
      caller.scope,
    );
    sendPage(res, 'deliveries', page);
  });

  routes.post('/webhooks/:id/deliveries/:delivery_id/redeliver', async (req, res) => {
    queryOf(req, []);
    const caller = callerOf(res);
    noteProject(res, await webhooks.get(req.params.id, caller.scope));
    requireRole(caller, 'admin', 'manage webhooks');
    const delivery = await webhooks.redeliver(req.params.id, req.params.delivery_id, caller.scope);
    res.status(201).json(delivery);
  });

  return routes;
}

/** A webhook's writes are filed under its project in the audit table (none for a webhook of every project). */
function noteProject(res: Response, webhook: { project?: string | null }): void {
  if (webhook.project) noteAudit(res, { project: webhook.project });
}
