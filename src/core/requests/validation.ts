import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

import type { JSONSchema } from '../../sdk/index.js';
import { InvalidRequestError } from '../errors.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** One problem in a request, located by a JSON pointer into the request body. */
export interface Problem {
  path: string;
  message: string;
}

export type Check = (value: unknown) => Problem[];

/**
 * Compiles JSON Schemas once. `useDefaults` fills declared defaults in, so the
 * caller validates a copy it owns.
 */
export function createSchemaCompiler(): { compile(schema: JSONSchema, where: string): Check } {
  const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true });
  addFormats(ajv);
  return {
    compile(schema, where) {
      let validate: ValidateFunction;
      try {
        validate = ajv.compile(schema);
      } catch (err) {
        throw new Error(`${where}: invalid JSON Schema: ${(err as Error).message}`, { cause: err });
      }
      return (value) => (validate(value) ? [] : (validate.errors ?? []).map(problemOf));
    },
  };
}

/** One ajv error as a problem: its JSON path (the missing or unknown property included) and message. */
export function problemOf(error: ErrorObject): Problem {
  const params = error.params as Record<string, unknown>;
  const extra =
    typeof params.additionalProperty === 'string' ? `/${params.additionalProperty}` : '';
  const missing = typeof params.missingProperty === 'string' ? `/${params.missingProperty}` : '';
  return {
    path: `${error.instancePath}${extra}${missing}` || '/',
    message: error.message ?? 'is invalid',
  };
}

/** Throws a 400 naming every problem, each path prefixed with where the value sits. */
export function assertValid(check: Check, value: unknown, prefix: string, what: string): void {
  const problems = check(value);
  if (problems.length === 0) return;
  const located = problems.map((p) => ({
    path: `${prefix}${p.path === '/' ? '' : p.path}` || '/',
    message: p.message,
  }));
  const summary = located.map((p) => `${p.path} ${p.message}`).join('; ');
  throw new InvalidRequestError(`${what} is invalid: ${summary}`, { problems: located });
}
