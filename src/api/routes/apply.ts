import type { ApplyCommand } from '../../core/requests/apply-command.js';
import type { Queries } from '../../core/requests/queries.js';
import { authorizeResource, NEEDS } from '../auth/authorize.js';
import { parseCreateBody, parseDryRun, queryOf, requestOptions } from '../request-parsing.js';
import { RouteTable } from '../route-table.js';
import type { BodyValidator } from '../schemas.js';
import { mayChange } from './resource-options.js';
import { sendAccepted } from './resources.js';

/**
 * PUT /resources/{urn} (apply-command.ts): the create body, for a URN in the path. A URN outside
 * the caller's projects is a 404 as on every request about one resource (not the 403 of a POST,
 * whose project is in the body). Created or changed: 202 as POST and PATCH answer (200 on a dry
 * run); nothing to change: 200 with the resource, as GET answers it.
 */
export function applyRoutes(
  apply: ApplyCommand,
  queries: Pick<Queries, 'getResource'>,
  schemas: BodyValidator,
): RouteTable {
  const routes = new RouteTable();
  routes.put('/resources/:urn', async (req, res) => {
    const { dry_run } = queryOf(req, ['dry_run']);
    const caller = authorizeResource(res, req.params.urn, NEEDS.change, 'apply resources');
    const request = parseCreateBody(schemas, req.body);
    const options = requestOptions(req, caller, parseDryRun(dry_run));
    const applied = await apply.apply(req.params.urn, request, options);
    if (applied.accepted) {
      sendAccepted(res, applied.accepted);
      return;
    }
    // As GET answers it, with the caller's allowed_actions.
    const resource = await queries.getResource(req.params.urn, caller.scope, mayChange(caller));
    res.setHeader('ETag', `"${resource.version}"`);
    res.status(200).json(resource);
  });
  return routes;
}
