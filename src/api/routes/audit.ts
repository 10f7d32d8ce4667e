import type { AuditQueries } from '../../core/audit/audit-queries.js';
import { InvalidRequestError } from '../../core/errors.js';
import { NAME_PATTERN } from '../../core/names.js';
import { AUDIT_ACTIONS } from '../auth/audit.js';
import { requireRole } from '../auth/authorize.js';
import { callerOf } from '../auth/caller.js';
import { parsePageSize, queryOf } from '../request-parsing.js';
import { RouteTable } from '../route-table.js';
import { sendPage } from '../send-page.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * GET /audit (docs/api.md#audit): admins only; an admin of some projects reads their
 * entries. `action` is an HTTP method (`PATCH`) or an action name (`resource.update`).
 */
export function auditRoutes(audit: AuditQueries): RouteTable {
  const routes = new RouteTable();
  routes.get('/audit', async (req, res) => {
    const q = queryOf(req, [
      'project',
      'actor',
      'action',
      'since',
      'until',
      'page_size',
      'page_token',
    ]);
    const caller = callerOf(res);
    requireRole(caller, 'admin', 'read the audit log');
    if (q.project !== undefined && !NAME_PATTERN.test(q.project))
      throw new InvalidRequestError('project is not a project name', {
        project: q.project,
        pattern: NAME_PATTERN.source,
      });
    if (q.actor !== undefined && !/^[\x21-\x7e]{1,100}$/.test(q.actor))
      throw new InvalidRequestError('actor is not a token name', { actor: q.actor });
    const sinceMs = parseTime('since', q.since);
    const untilMs = parseTime('until', q.until);
    if (sinceMs !== undefined && untilMs !== undefined && sinceMs > untilMs)
      throw new InvalidRequestError('since is after until', { since: q.since, until: q.until });
    const page = await audit.list(
      { project: q.project, actor: q.actor, ...parseAction(q.action), sinceMs, untilMs },
      parsePageSize(q.page_size),
      q.page_token,
      caller.scope,
    );
    sendPage(res, 'entries', page);
  });
  return routes;
}

function parseAction(raw: string | undefined): { method?: string; action?: string } {
  if (raw === undefined) return {};
  if (METHODS.has(raw)) return { method: raw };
  if (AUDIT_ACTIONS.has(raw)) return { action: raw };
  throw new InvalidRequestError(
    'action is neither an HTTP method nor an action name (resource.update, operation.cancel, …)',
    { action: raw },
  );
}

/** An RFC 3339 time with its offset (what every time in the API is); epoch ms inside. */
function parseTime(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i.test(raw)
    ? Date.parse(raw)
    : NaN;
  if (Number.isNaN(ms))
    throw new InvalidRequestError(`${name} is not an RFC 3339 time such as 2026-01-31T12:00:00Z`, {
      [name]: raw,
    });
  return ms;
}
