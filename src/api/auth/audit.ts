import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';

import { outcomeOf, PATH_MAX, type UntimedAuditEntry } from '../../core/audit/audit-entry.js';
import { StewardError } from '../../core/errors.js';
import type { CoreLogger } from '../../core/logging.js';
import { inScope, OutOfScopeError } from '../../core/requests/scope.js';
import { whenAnswered } from '../answered.js';
import { API_PREFIX } from '../prefix.js';
import { findCaller } from './caller.js';

/** What a route adds to its audit line once it knows it (a create's project, the operation's resource). */
export interface AuditNote {
  project?: string;
  urn?: string;
  moduleAction?: string;
  /** A read of secrets: audited like a change, with the fields read (JSON pointers, never values). */
  secretFields?: string[];
  /** The operation the request wrote, when no Location header names it (pause, resume). */
  operationId?: string;
}

const NOTE = 'auditNote';
const ERROR = 'auditError';
const MUTATIONS = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

/** Adds fields to the request's audit line (it is written only if the request is audited). */
export function noteAudit(res: Response, note: AuditNote): void {
  res.locals[NOTE] = { ...(res.locals[NOTE] as AuditNote | undefined), ...note };
}

/**
 * One `audit` line at info, when the answer's status is sent, for every accepted mutation
 * (a 2xx to POST, PATCH or DELETE; dry runs too, marked) and every denial: 401,
 * 403, 429, and a 404 that hid something outside the caller's projects. Fields:
 * the token's name (`anonymous` in open mode, `unknown` before authentication),
 * project, action, urn, operationId, outcome, status and code. Never a token, a
 * header or a body.
 *
 * `record` (the audit table, core/audit/audit-recorder.ts) gets the same requests and
 * every other write (POST, PUT, PATCH, DELETE) whatever its answer: a 400 or a 409 to a
 * write is a refusal worth keeping, and a 5xx a failure.
 */
export function auditLog(
  logger: CoreLogger,
  record?: (entry: UntimedAuditEntry) => void,
): RequestHandler {
  const log = logger.child({ component: 'audit' });
  return (req, res, next) => {
    whenAnswered(res, () => {
      const logged = writeLine(log, req, res);
      if (record && (logged || MUTATIONS.has(req.method))) record(entryOf(req, res));
    });
    next();
  };
}

/** Writes the request's audit line when it is audited; whether it was. */
function writeLine(log: CoreLogger, req: Request, res: Response): boolean {
  const error = res.locals[ERROR] as { code: string; hidden: boolean } | undefined;
  const status = res.statusCode;
  const note = (res.locals[NOTE] as AuditNote | undefined) ?? {};
  const denied =
    status === 401 ||
    status === 403 ||
    status === 429 ||
    (status === 404 && error?.hidden === true);
  const accepted =
    status >= 200 && status < 300 && (MUTATIONS.has(req.method) || note.secretFields !== undefined);
  if (!denied && !accepted) return false;
  const target = describe(req);
  const urn = note.urn ?? target.urn;
  // Built a field at a time, not with spreads between fields: each field an object literal adds after
  // a spread costs about half a microsecond on Node 20 (docs/decisions.md, "Hot objects built
  // without a spread").
  const line: Record<string, unknown> = {
    tokenName: findCaller(res)?.name ?? 'unknown',
    project: note.project ?? projectOf(urn),
    action: target.action,
  };
  if (urn) line.urn = urn;
  if (target.operationId) line.operationId = target.operationId;
  if (note.moduleAction && /^[\w.-]{1,100}$/.test(note.moduleAction))
    line.moduleAction = note.moduleAction;
  if (note.secretFields) line.fields = note.secretFields;
  if (accepted && req.query.dry_run !== undefined && req.query.dry_run !== 'false')
    line.dryRun = true;
  line.outcome = denied ? 'denied' : 'accepted';
  line.status = status;
  if (error) line.code = error.code;
  line.requestId = res.locals.requestId as string | undefined;
  log.info('audit', line);
  return true;
}

function entryOf(req: Request, res: Response): UntimedAuditEntry {
  const error = res.locals[ERROR] as { code: string } | undefined;
  const note = (res.locals[NOTE] as AuditNote | undefined) ?? {};
  const target = describe(req);
  const urn = note.urn ?? target.urn;
  const location = /\/operations\/([\w-]{1,100})$/.exec(String(res.getHeader('Location') ?? ''));
  const status = res.statusCode;
  const caller = findCaller(res);
  const project = note.project ?? projectOf(urn) ?? null;
  return {
    actor: caller?.name ?? 'unknown',
    // A request about a project outside the caller's (a hidden 404, a create refused there) is filed under no
    // project: that project's admins would otherwise read the name of another project's token.
    project: project !== null && caller && !inScope(caller.scope, project) ? null : project,
    method: req.method,
    path: (req.originalUrl.split('?')[0] ?? '').slice(0, PATH_MAX),
    action: target.action,
    urn: urn ?? null,
    operation_id: target.operationId ?? note.operationId ?? location?.[1] ?? null,
    status,
    outcome: outcomeOf(status),
    code: error?.code ?? null,
    request_id: (res.locals.requestId as string | undefined) ?? '',
    dry_run: status < 300 && req.query.dry_run !== undefined && req.query.dry_run !== 'false',
  };
}

/** Placed before the error handler: remembers the error's code, and whether a 404 was a hidden one. */
export const auditErrors: ErrorRequestHandler = (err: unknown, _req, res, next) => {
  if (err instanceof StewardError)
    res.locals[ERROR] = { code: err.code, hidden: err instanceof OutOfScopeError };
  next(err);
};

/** `resource.update`, `operation.cancel`, …: named from the method and the path, so even a 401 before routing has one. */
const ACTIONS: Array<[method: string, path: RegExp, action: string]> = [
  ['POST', /^\/resources$/, 'resource.create'],
  ['GET', /^\/resources$/, 'resource.list'],
  ['GET', /^\/resources\/([^/]+)$/, 'resource.get'],
  ['PATCH', /^\/resources\/([^/]+)$/, 'resource.update'],
  ['PUT', /^\/resources\/([^/]+)$/, 'resource.apply'],
  ['DELETE', /^\/resources\/([^/]+)$/, 'resource.delete'],
  ['OPTIONS', /^\/resources\/([^/]+)$/, 'resource.options'],
  ['POST', /^\/resources\/([^/]+)\/execute$/, 'resource.execute'],
  ['POST', /^\/resources\/([^/]+)\/actions\/[^/]+$/, 'resource.execute'],
  ['POST', /^\/resources\/([^/]+)\/retry$/, 'resource.retry'],
  ['POST', /^\/resources\/([^/]+)\/refresh$/, 'resource.refresh'],
  ['POST', /^\/resources\/([^/]+)\/pause$/, 'resource.pause'],
  ['POST', /^\/resources\/([^/]+)\/resume$/, 'resource.resume'],
  ['GET', /^\/resources\/([^/]+)\/revisions$/, 'resource.revisions'],
  ['GET', /^\/resources\/([^/]+)\/logs$/, 'resource.logs'],
  ['GET', /^\/resources\/([^/]+)\/secrets$/, 'resource.secrets.read'],
  ['POST', /^\/resources\/([^/]+)\/schedules$/, 'schedule.create'],
  ['GET', /^\/resources\/([^/]+)\/schedules$/, 'schedule.list'],
  ['GET', /^\/schedules$/, 'schedule.list'],
  ['GET', /^\/schedules\/[^/]+$/, 'schedule.get'],
  ['DELETE', /^\/schedules\/[^/]+$/, 'schedule.delete'],
  ['GET', /^\/operations$/, 'operation.list'],
  ['GET', /^\/operations\/([^/]+)$/, 'operation.get'],
  ['POST', /^\/operations\/([^/]+)\/cancel$/, 'operation.cancel'],
  ['GET', /^\/modules$/, 'module.list'],
  ['GET', /^\/modules\/[^/]+$/, 'module.get'],
  ['GET', /^\/events$/, 'event.watch'],
  ['GET', /^\/audit$/, 'audit.list'],
  ['POST', /^\/webhooks$/, 'webhook.create'],
  ['GET', /^\/webhooks$/, 'webhook.list'],
  ['GET', /^\/webhooks\/[^/]+$/, 'webhook.get'],
  ['DELETE', /^\/webhooks\/[^/]+$/, 'webhook.delete'],
  ['GET', /^\/webhooks\/[^/]+\/deliveries$/, 'webhook.deliveries'],
  ['POST', /^\/webhooks\/[^/]+\/deliveries\/[^/]+\/redeliver$/, 'webhook.redeliver'],
  ['GET', /^\/whoami$/, 'whoami'],
];

/** Every action name an audit entry can carry (GET /audit?action= takes one of these, or a method). */
export const AUDIT_ACTIONS: ReadonlySet<string> = new Set([
  ...ACTIONS.map(([, , action]) => action),
  'metrics.read',
  'unknown',
]);

function describe(req: Request): { action: string; urn?: string; operationId?: string } {
  const path = req.originalUrl.split('?')[0] ?? '';
  if (path === '/metrics') return { action: 'metrics.read' };
  if (!path.startsWith(`${API_PREFIX}/`)) return { action: 'unknown' };
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  for (const [m, pattern, action] of ACTIONS) {
    const match = m === method ? pattern.exec(path.slice(API_PREFIX.length)) : null;
    if (!match) continue;
    const id = match[1] === undefined ? undefined : decoded(match[1]);
    if (action.startsWith('operation.')) return { action, operationId: id };
    return { action, urn: id };
  }
  return { action: 'unknown' };
}

function decoded(segment: string): string | undefined {
  try {
    const value = decodeURIComponent(segment);
    // Only what could be a URN or an operation id goes into a log line.
    return /^[\w:.-]{1,300}$/.test(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function projectOf(urn: string | undefined): string | undefined {
  const parts = urn?.split(':');
  return parts?.length === 5 && parts[0] === 'orn' && parts[1] === 'steward' ? parts[3] : undefined;
}
