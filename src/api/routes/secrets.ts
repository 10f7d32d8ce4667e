import type { SecretReads } from '../../core/secrets/secret-reads.js';
import { noteAudit } from '../auth/audit.js';
import { authorizeResource } from '../auth/authorize.js';
import { queryOf } from '../request-parsing.js';
import { RouteTable } from '../route-table.js';

/**
 * GET /resources/{urn}/secrets: the resource's secret outputs, opened, for an
 * admin of its project (anyone else: 403, or 404 outside their projects). Never
 * cached, and every read is an audit line naming the fields (not the values).
 */
export function secretRoutes(secrets: SecretReads): RouteTable {
  const routes = new RouteTable();
  routes.get('/resources/:urn/secrets', async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    queryOf(req, []);
    const caller = authorizeResource(res, req.params.urn, 'admin', 'read secret outputs');
    const read = await secrets.readSecretOutput(req.params.urn, caller.scope);
    noteAudit(res, { secretFields: [...read.fields, ...read.unreadable.map((u) => u.field)] });
    res.json({
      urn: read.urn,
      version: read.version,
      output: read.output,
      unreadable: read.unreadable,
    });
  });
  return routes;
}
