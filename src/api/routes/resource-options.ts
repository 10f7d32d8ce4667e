import type { ResourceForCaller } from '../../core/requests/allowed-actions.js';
import type { Queries } from '../../core/requests/queries.js';
import { NEEDS, roleAtLeast } from '../auth/authorize.js';
import { type Caller, callerOf } from '../auth/caller.js';
import { queryOf } from '../request-parsing.js';
import type { RouteTable } from '../route-table.js';

/** Whether the caller's role may change resources (its scope is checked where the resource is read). */
export function mayChange(caller: Caller): boolean {
  return roleAtLeast(caller.role, NEEDS.change);
}

/**
 * `OPTIONS /resources/{urn}` (docs/api.md#allowed-actions): `Allow` lists the methods of this
 * URL the caller may use now, and the body the resource's `allowed_actions`. One outside the
 * caller's projects answers 404, as a missing one does.
 */
export function optionsRoute(routes: RouteTable, queries: Pick<Queries, 'getResource'>): void {
  routes.options('/resources/:urn', async (req, res) => {
    queryOf(req, []);
    const caller = callerOf(res);
    const resource = (await queries.getResource(
      req.params.urn,
      caller.scope,
      mayChange(caller),
    )) as ResourceForCaller;
    const actions = resource.allowed_actions;
    const methods = ['GET', 'HEAD', 'OPTIONS'];
    // PUT (apply) changes a resource as PATCH does; it may also create one, which a missing URN's 404 leaves out.
    if (actions.includes('update')) methods.push('PUT', 'PATCH');
    if (actions.includes('delete') || actions.includes('orphan')) methods.push('DELETE');
    res.setHeader('Allow', methods.join(', '));
    res.setHeader('ETag', `"${resource.version}"`);
    res.status(200).json({
      urn: resource.urn,
      status: resource.state.status,
      allowed_actions: actions,
    });
  });
}
