import { InvalidRequestError } from '../../core/errors.js';
import type { OperationStatus } from '../../core/model.js';
import type { OperationCommands } from '../../core/requests/operation-commands.js';
import type { Queries } from '../../core/requests/queries.js';
import { noteAudit } from '../auth/audit.js';
import { NEEDS, requireRole } from '../auth/authorize.js';
import { callerOf } from '../auth/caller.js';
import { parsePageSize, parseUrnFilter, queryOf } from '../request-parsing.js';
import { RouteTable } from '../route-table.js';
import { sendPage } from '../send-page.js';

const STATUSES: readonly OperationStatus[] = [
  'queued',
  'running',
  'succeeded',
  'failed',
  'cancelled',
];

export function operationRoutes(queries: Queries, commands: OperationCommands): RouteTable {
  const routes = new RouteTable();

  routes.get('/operations', async (req, res) => {
    const q = queryOf(req, ['urn', 'status', 'page_size', 'page_token']);
    if (q.status !== undefined && !STATUSES.includes(q.status as OperationStatus)) {
      throw new InvalidRequestError(`status must be one of ${STATUSES.join(', ')}`);
    }
    const page = await queries.listOperations(
      { urn: parseUrnFilter(q.urn), status: q.status as OperationStatus | undefined },
      parsePageSize(q.page_size),
      q.page_token,
      callerOf(res).scope,
    );
    sendPage(res, 'operations', page);
  });

  routes.get('/operations/:id', async (req, res) => {
    queryOf(req, []);
    res.json(await queries.getOperation(req.params.id, callerOf(res).scope));
  });

  routes.post('/operations/:id/cancel', async (req, res) => {
    queryOf(req, []);
    const caller = callerOf(res);
    // Outside the caller's projects it is a 404 whatever the role; inside, a viewer gets 403.
    const operation = await queries.getOperation(req.params.id, caller.scope);
    noteAudit(res, { urn: operation.urn });
    requireRole(caller, NEEDS.change, 'cancel operations');
    res.json(await commands.cancelOperation(req.params.id, caller.name, caller.scope));
  });

  return routes;
}
