import type { RequestHandler } from 'express';

import type { UntimedAuditEntry } from '../../core/audit/audit-entry.js';
import type { CoreLogger } from '../../core/logging.js';
import { inScope } from '../../core/requests/scope.js';
import { auditLog } from './audit.js';
import { authenticate } from './authenticate.js';
import { NEEDS, requireMetricsReader, requireRole, roleAtLeast } from './authorize.js';
import { callerOf } from './caller.js';
import { rateLimit } from './rate-limit.js';
import { createTokenSource, type TokenSource } from './token-source.js';

export interface AccessOptions {
  /** STEWARD_TOKENS_FILE; undefined: open mode. */
  tokensFile: string | undefined;
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  /** Milliseconds, from Steward's clock (the rate limit and the reload check). */
  now: () => number;
  logger: CoreLogger;
  /** Where each audited request's entry goes (the audit table's recorder); none: the log line only. */
  recordAudit?: (entry: UntimedAuditEntry) => void;
}

export interface AccessControl {
  /** `tokens` with a tokens file, `open` without one. */
  mode: 'tokens' | 'open';
  /** In front of the API: audit (so even a 401 is logged), authenticate, rate limit, and no `metrics` token past it. */
  guard: RequestHandler[];
  /** In front of GET /metrics: the same, then only an admin on every project or a `metrics` token. */
  metricsGuard: RequestHandler[];
  /**
   * Whether the token named `maker` may still change resources of `project` (what a schedule's
   * request needs when it fires): null if so, else why not. Open mode allows every maker.
   */
  makerMayChange(maker: string, project: string): string | null;
}

/**
 * Authentication, rate limiting and the audit log, built once from the
 * configuration. Reading the tokens file happens here: an unreadable or invalid
 * file throws, and Steward does not start.
 */
export function createAccessControl(options: AccessOptions): AccessControl {
  const source: TokenSource | undefined = options.tokensFile
    ? createTokenSource({ file: options.tokensFile, logger: options.logger, now: options.now })
    : undefined;
  const common = [
    auditLog(options.logger, options.recordAudit),
    authenticate(source),
    rateLimit({
      perSecond: options.rateLimitPerSecond,
      burst: options.rateLimitBurst,
      now: options.now,
    }),
  ];
  return {
    mode: source ? 'tokens' : 'open',
    // Lists, watches and /modules check no role (a viewer may read them): the metrics role is refused here, once.
    guard: [
      ...common,
      (_req, res, next) => {
        requireRole(callerOf(res), 'viewer', 'use the API');
        next();
      },
    ],
    metricsGuard: [
      ...common,
      (_req, res, next) => {
        requireMetricsReader(callerOf(res));
        next();
      },
    ],
    makerMayChange(maker, project) {
      if (!source) return null;
      const token = source.current().find((known) => known.name === maker);
      if (!token) return `token ${maker} is no longer in the tokens file`;
      if (!inScope(token.scope, project))
        return `token ${maker} no longer reaches project ${project}`;
      if (!roleAtLeast(token.role, NEEDS.change))
        return `token ${maker} is now ${token.role}; the request needs ${NEEDS.change}`;
      return null;
    },
  };
}

/** 127.0.0.0/8, ::1 and localhost: the addresses only this machine reaches. */
export function isLoopback(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return (
    h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || h === '::ffff:127.0.0.1'
  );
}
