import type { Request } from 'express';

import { InvalidRequestError } from '../core/errors.js';
import type { ResourcePolicy, ResourceStatus } from '../core/model.js';
import { KIND_PATTERN, NAME_PATTERN, parseUrn } from '../core/names.js';
import type {
  CreateRequest,
  RequestOptions,
  UpdateRequest,
} from '../core/requests/command-types.js';
import { FIXED_LIMITS, LIMIT_SETTINGS } from '../core/requests/limits.js';
import type { Caller } from './auth/caller.js';
import { idempotencyOf } from './idempotency.js';
import type { BodyValidator } from './schemas.js';

/** Turns HTTP requests into core's request types: the API's own validation, nothing more. */

interface NestedCreate {
  expires_at?: string;
  kind: string;
  project: string;
  name: string;
  labels?: Record<string, string>;
  spec?: {
    configs?: Record<string, unknown>;
    dependencies?: Record<string, string>;
    policy?: Partial<ResourcePolicy>;
  };
  import?: boolean;
}
interface FlatCreate {
  expires_at?: string;
  kind: string;
  project?: string;
  parent?: string;
  name: string;
  labels?: Record<string, string>;
  configs?: Record<string, unknown>;
  dependencies?: Record<string, string>;
  policy?: Partial<ResourcePolicy>;
  import?: boolean;
}

/** The nested body, or the seed's flat one (`parent` is the project). */
export function parseCreateBody(schemas: BodyValidator, body: unknown): CreateRequest {
  const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
  const nested =
    isObject &&
    ('spec' in body ||
      !('configs' in body || 'parent' in body || 'dependencies' in body || 'policy' in body));
  if (nested) {
    const b = schemas.assert<NestedCreate>('create-resource.json', body);
    return {
      kind: b.kind,
      project: b.project,
      name: b.name,
      labels: b.labels,
      configs: b.spec?.configs,
      dependencies: b.spec?.dependencies,
      policy: b.spec?.policy,
      import: b.import,
      expiresAt: b.expires_at,
    };
  }
  const b = schemas.assert<FlatCreate>('create-resource-flat.json', body);
  return {
    kind: b.kind,
    project: (b.project ?? b.parent)!,
    name: b.name,
    labels: b.labels,
    configs: b.configs,
    dependencies: b.dependencies,
    policy: b.policy,
    import: b.import,
    expiresAt: b.expires_at,
  };
}

export function parseUpdateBody(schemas: BodyValidator, body: unknown): UpdateRequest {
  const b = schemas.assert<{
    labels?: Record<string, string>;
    spec?: {
      configs?: Record<string, unknown>;
      dependencies?: Record<string, string>;
      policy?: Partial<ResourcePolicy>;
    };
    configs?: Record<string, unknown>;
    dependencies?: Record<string, string>;
    policy?: Partial<ResourcePolicy>;
  }>('update-resource.json', body);
  return {
    labels: b.labels,
    configs: b.spec?.configs ?? b.configs,
    dependencies: b.spec?.dependencies ?? b.dependencies,
    policy: b.spec?.policy ?? b.policy,
  };
}

/** Query parameters: only the named ones, each given once. */
export function queryOf(
  req: Request,
  allowed: readonly string[],
): Record<string, string | undefined> {
  const result: Record<string, string | undefined> = {};
  // No query string, nothing to read: express parses `req.query` anew at each read (1.9 % of a GET's CPU).
  if (!req.url.includes('?')) return result;
  for (const [key, value] of Object.entries(req.query)) {
    if (!allowed.includes(key))
      throw new InvalidRequestError(
        `unknown query parameter "${key}"; allowed: ${allowed.join(', ')}`,
        { allowed },
      );
    if (typeof value !== 'string')
      throw new InvalidRequestError(
        `query parameter "${key}" must be given once, as a plain value`,
      );
    result[key] = value;
  }
  return result;
}

/** docs/design.md §8: default 50, at most 500; past the bound is a 400 rather than a silently shorter page. */
export function parsePageSize(raw: string | undefined): number {
  const { pageSizeDefault, pageSizeMax } = FIXED_LIMITS;
  if (raw === undefined) return pageSizeDefault;
  if (!/^\d{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > pageSizeMax) {
    throw new InvalidRequestError(`page_size must be a whole number from 1 to ${pageSizeMax}`, {
      limit: 'page_size',
      max: pageSizeMax,
    });
  }
  return Number(raw);
}

export function parseDryRun(raw: string | undefined): boolean {
  return parseFlag('dry_run', raw) ?? false;
}

/** A true/false query parameter (`?flag` alone is true); undefined when absent. */
export function parseFlag(name: string, raw: string | undefined): boolean | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'false') return false;
  if (raw === 'true' || raw === '') return true;
  throw new InvalidRequestError(`${name} must be true or false`);
}

export function parseStatus(raw: string | undefined): ResourceStatus | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'PENDING' || raw === 'COMPLETED' || raw === 'ERROR') return raw;
  throw new InvalidRequestError('status must be one of PENDING, COMPLETED, ERROR');
}

/**
 * The filters of the lists (project, kind, urn): given, each must be a value that could match,
 * else 400 as a bad `status` is, so a typo (`project=Alpha`, `kind=`) never lists nothing silently.
 * A valid project with no resources still lists nothing (200). Whether a kind is loaded is core's check.
 */
export function parseNameFilter(name: string, raw: string | undefined): string | undefined {
  if (raw === undefined || NAME_PATTERN.test(raw)) return raw;
  throw new InvalidRequestError(`${name} must be a name matching ${NAME_PATTERN.source}`, {
    [name]: NAME_PATTERN.source,
  });
}

export function parseKindFilter(raw: string | undefined): string | undefined {
  if (raw === undefined || KIND_PATTERN.test(raw)) return raw;
  throw new InvalidRequestError(`kind must be a kind matching ${KIND_PATTERN.source}`, {
    kind: KIND_PATTERN.source,
  });
}

export function parseUrnFilter(raw: string | undefined): string | undefined {
  return raw === undefined ? undefined : parseUrn(raw).urn;
}

/** `labels=k=v,k2=v2`: the pattern the OpenAPI document gives the parameter. */
export const LABEL_FILTER_PATTERN =
  '^[A-Za-z0-9][A-Za-z0-9._/-]*=[^,]*(,[A-Za-z0-9][A-Za-z0-9._/-]*=[^,]*)*$';

/**
 * `labels=k=v,k2=v2`: at most `maxPairs` pairs (STEWARD_MAX_LABELS: no resource has more labels, so a longer filter
 * could match nothing, and each pair is a condition in the query).
 */
export function parseLabelFilter(
  raw: string | undefined,
  maxPairs: number,
): Record<string, string> | undefined {
  if (raw === undefined) return undefined;
  const pairs = raw.split(',');
  if (pairs.length > maxPairs) {
    throw new InvalidRequestError(
      `labels names ${pairs.length} pairs, more than the ${maxPairs} allowed (${LIMIT_SETTINGS.labels})`,
      {
        limit: LIMIT_SETTINGS.labels,
        max: maxPairs,
      },
    );
  }
  const labels: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0 || !LABEL_KEY.test(pair.slice(0, at)))
      throw new InvalidRequestError(
        `labels must be k=v pairs separated by commas; "${pair}" is not`,
      );
    labels[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return labels;
}

const LABEL_KEY = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;

/** `If-Match: "3"` (or W/"3", 3, *). Anything else names no version the API ever gave out: 400, not a silent 412. */
export function parseIfMatch(header: string | undefined): RequestOptions['ifMatch'] {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value === '*') return '*';
  const match = /^(?:W\/)?(?:"(\d{1,15})"|(\d{1,15}))$/.exec(value);
  if (!match)
    throw new InvalidRequestError(
      'If-Match must be a version as the ETag gives it ("3", W/"3" or 3), or *',
      { header: 'If-Match' },
    );
  return Number(match[1] ?? match[2]);
}

/** The actor is the authenticated caller's token name (`anonymous` in open mode), never a header the caller sets. */
export function requestOptions(req: Request, caller: Caller, dryRun: boolean): RequestOptions {
  return {
    actor: caller.name,
    dryRun,
    ifMatch: parseIfMatch(req.headers['if-match']),
    idempotency: req.res && idempotencyOf(req.res),
  };
}
