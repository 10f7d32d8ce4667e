import { InvalidRequestError } from '../errors.js';
import { NAME_MAX_CHARS } from '../names.js';
import type { ResourceCommands } from './resource-commands.js';
import type { Problem } from './validation.js';

/**
 * Bounds every client can rely on, the same on every Steward: docs/design.md §3 (names,
 * labels) and §8 (page size), and the nesting a body may have.
 */
export const FIXED_LIMITS = Object.freeze({
  /** `page_size` when none is given. */
  pageSizeDefault: 50,
  /** The largest `page_size`; a larger one is a 400 (docs/design.md §8: "at most 500"). */
  pageSizeMax: 500,
  /** `kind`, `project` and `name`: at most 63 characters (the patterns of names.ts). */
  nameChars: NAME_MAX_CHARS,
  /** A label key: 1 to 63 characters. */
  labelKeyChars: 63,
  /** A label value: at most 255 characters. */
  labelValueChars: 255,
  /** Levels of nesting in a request body: deeper would overflow the stack when walked or stored. */
  bodyDepth: 100,
});

/** What one request may make Steward store, and one sync may return: the fixed bounds and the operator's settings. */
export interface Limits {
  readonly pageSizeDefault: number;
  readonly pageSizeMax: number;
  readonly nameChars: number;
  readonly labelKeyChars: number;
  readonly labelValueChars: number;
  readonly bodyDepth: number;
  /** STEWARD_MAX_BODY_BYTES: a larger request body answers 413. */
  readonly bodyBytes: number;
  /** STEWARD_MAX_LABELS: labels on one resource. */
  readonly labels: number;
  /** STEWARD_MAX_PARAMS_BYTES: an action's params, as UTF-8 bytes of JSON. */
  readonly paramsBytes: number;
  /** STEWARD_MAX_STATE_BYTES: `output` + `data` of one sync result (checked by the sync engine). */
  readonly stateBytes: number;
}

/** The operator's settings (src/config.ts reads them). */
export interface LimitSettings {
  maxBodyBytes: number;
  maxLabels: number;
  maxParamsBytes: number;
  maxStateBytes: number;
}

/** The variable that sets each configurable limit, named in every refusal. */
export const LIMIT_SETTINGS = Object.freeze({
  bodyBytes: 'STEWARD_MAX_BODY_BYTES',
  labels: 'STEWARD_MAX_LABELS',
  paramsBytes: 'STEWARD_MAX_PARAMS_BYTES',
  stateBytes: 'STEWARD_MAX_STATE_BYTES',
});

export function resolveLimits(settings: LimitSettings): Readonly<Limits> {
  return Object.freeze({
    ...FIXED_LIMITS,
    bodyBytes: settings.maxBodyBytes,
    labels: settings.maxLabels,
    paramsBytes: settings.maxParamsBytes,
    stateBytes: settings.maxStateBytes,
  });
}

/** One limit a request went past: where, which limit (a setting, or the fixed bound's name) and its value. */
export interface LimitProblem extends Problem {
  limit: string;
  max: number;
}

/** Labels past the count, key or value bounds; an empty list when they fit. Not an object: the schema's concern. */
export function labelProblems(labels: unknown, limits: Limits): LimitProblem[] {
  if (typeof labels !== 'object' || labels === null || Array.isArray(labels)) return [];
  const entries = Object.entries(labels as Record<string, unknown>);
  const problems: LimitProblem[] = [];
  if (entries.length > limits.labels) {
    problems.push({
      path: '/labels',
      message: `has ${entries.length} labels, more than the ${limits.labels} allowed (${LIMIT_SETTINGS.labels})`,
      limit: LIMIT_SETTINGS.labels,
      max: limits.labels,
    });
  }
  for (const [key, value] of entries) {
    const keyChars = characters(key);
    if (keyChars > limits.labelKeyChars) {
      problems.push({
        path: `/labels/${pointerToken(key)}`,
        message: `key is ${keyChars} characters, more than the ${limits.labelKeyChars} a label key may have`,
        limit: 'label_key_chars',
        max: limits.labelKeyChars,
      });
    }
    const valueChars = typeof value === 'string' ? characters(value) : 0;
    if (valueChars > limits.labelValueChars) {
      problems.push({
        path: `/labels/${pointerToken(key)}`,
        message: `value is ${valueChars} characters, more than the ${limits.labelValueChars} a label value may have`,
        limit: 'label_value_chars',
        max: limits.labelValueChars,
      });
    }
  }
  return problems;
}

/** Params larger than STEWARD_MAX_PARAMS_BYTES as JSON (they are stored with the operation, and again on each retry). */
export function paramsProblems(params: unknown, limits: Limits): LimitProblem[] {
  const bytes = Buffer.byteLength(JSON.stringify(params ?? {}) ?? '', 'utf8');
  if (bytes <= limits.paramsBytes) return [];
  return [
    {
      path: '/params',
      message: `is ${bytes} bytes of JSON, more than the ${limits.paramsBytes} allowed (${LIMIT_SETTINGS.paramsBytes})`,
      limit: LIMIT_SETTINGS.paramsBytes,
      max: limits.paramsBytes,
    },
  ];
}

/** Throws the 400 naming each limit the request went past, and its value; does nothing when there is none. */
export function assertWithinLimits(problems: LimitProblem[], what: string): void {
  if (problems.length === 0) return;
  const summary = problems.map((p) => `${p.path} ${p.message}`).join('; ');
  throw new InvalidRequestError(`${what} is over a limit: ${summary}`, { problems });
}

/**
 * The commands, refusing a request past a limit before they read or store anything:
 * labels on create and PATCH, params on an action. Every caller of core (the API,
 * an embedding program) goes through it; the body size is the API's to check.
 */
export function withRequestLimits(commands: ResourceCommands, limits: Limits): ResourceCommands {
  return {
    ...commands,
    async create(request, options) {
      assertWithinLimits(labelProblems(request.labels, limits), 'the resource');
      return commands.create(request, options);
    },
    async update(urn, request, options) {
      assertWithinLimits(labelProblems(request.labels, limits), 'the update');
      return commands.update(urn, request, options);
    },
    async execute(urn, action, params, options) {
      assertWithinLimits(paramsProblems(params, limits), `action ${action}`);
      return commands.execute(urn, action, params, options);
    },
    // A scheduler's batched firing plans through these: the same limits as the requests above.
    prepared: {
      ...commands.prepared,
      async update(current, request, options) {
        assertWithinLimits(labelProblems(request.labels, limits), 'the update');
        return commands.prepared.update(current, request, options);
      },
      async execute(current, action, params, options) {
        assertWithinLimits(paramsProblems(params, limits), `action ${action}`);
        return commands.prepared.execute(current, action, params, options);
      },
    },
  };
}

/** Characters as JSON Schema's maxLength counts them: code points, not UTF-16 units. */
function characters(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/** A key as a JSON pointer token (RFC 6901). */
function pointerToken(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
