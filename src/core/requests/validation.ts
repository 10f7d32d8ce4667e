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
 * Validators already compiled in this process, by the schema's JSON text. ajv turns a schema into
 * code (0.1-0.3 s for the built-in kinds' schemas), and a process that makes Steward more than once
 * (every test suite, `module test`) would pay it each time; a compiled function holds no state but
 * the errors of its last call, read right after it. Bounded: a reloaded module's old schemas go.
 * A schema with an `$id` is left out: a later schema of the same compiler may `$ref` it by that id,
 * which needs it added to that compiler's Ajv.
 */
const COMPILED = new Map<string, ValidateFunction>();
const MAX_COMPILED = 512;

/**
 * Compiles JSON Schemas once. `useDefaults` fills declared defaults in, so the
 * caller validates a copy it owns.
 */
export function createSchemaCompiler(): { compile(schema: JSONSchema, where: string): Check } {
  let ajv: Ajv | undefined;
  return {
    compile(schema, where) {
      const key = JSON.stringify(schema);
      const shared = !key.includes('"$id"');
      let validate = shared ? COMPILED.get(key) : undefined;
      if (!validate) {
        // One Ajv per compiler, as before: ids clash within one registry only, and made on
        // the first schema not seen yet, so a registry of known schemas makes none.
        if (!ajv)
          addFormats((ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true })));
        try {
          validate = ajv.compile(schema);
        } catch (err) {
          throw new Error(`${where}: invalid JSON Schema: ${(err as Error).message}`, {
            cause: err,
          });
        }
        if (shared) {
          if (COMPILED.size >= MAX_COMPILED) COMPILED.delete(COMPILED.keys().next().value!);
          COMPILED.set(key, validate);
        }
      }
      const compiled = validate;
      return (value) => (compiled(value) ? [] : (compiled.errors ?? []).map(problemOf));
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
