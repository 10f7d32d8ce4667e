import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

import { InvalidRequestError } from '../core/errors.js';
import { problemOf } from '../core/requests/validation.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** The JSON Schemas of the API bodies, from the repository's `schemas/` folder. */
export type BodySchema =
  | 'create-resource.json'
  | 'create-resource-flat.json'
  | 'update-resource.json'
  | 'execute.json'
  | 'action-params.json'
  | 'create-schedule.json'
  | 'create-webhook.json';

export interface BodyValidator {
  /** Throws a 400 naming the JSON path of each problem. */
  assert<T>(schema: BodySchema, body: unknown): T;
  /** Every schema document, by file name (for the OpenAPI document). */
  documents(): Record<string, object>;
}

/**
 * One validator per folder in a process: the files do not change while it runs, and ajv reading
 * them (its meta-schema compiled for each Ajv) cost 20-120 ms every time Steward was made.
 */
const LOADED = new Map<string, BodyValidator>();

export function loadBodySchemas(dir: string = findSchemasDir()): BodyValidator {
  let validator = LOADED.get(dir);
  if (!validator) LOADED.set(dir, (validator = readBodySchemas(dir)));
  return validator;
}

function readBodySchemas(dir: string): BodyValidator {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const documents: Record<string, object> = {};
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.json'))) {
    const schema = JSON.parse(readFileSync(join(dir, file), 'utf8')) as object;
    documents[file] = schema;
    ajv.addSchema(schema, file);
  }
  const compiled = new Map<string, ValidateFunction>();
  return {
    assert<T>(schema: BodySchema, body: unknown): T {
      let validate = compiled.get(schema);
      if (!validate) {
        validate = ajv.getSchema(schema);
        if (!validate) throw new Error(`schema ${schema} is missing from ${dir}`);
        compiled.set(schema, validate);
      }
      if (body === undefined)
        throw new InvalidRequestError('the request needs a JSON body', {
          problems: [{ path: '/', message: 'is required' }],
        });
      if (validate(body)) return body as T;
      const problems = (validate.errors ?? []).map(problemOf);
      throw new InvalidRequestError(
        `the request body is invalid: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
        { problems },
      );
    },
    documents: () => documents,
  };
}

/** `schemas/` sits at the package root, above both src/ (tests) and dist/src/ (built). */
function findSchemasDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i += 1) {
    const candidate = join(dir, 'schemas');
    if (existsSync(join(candidate, 'common.json'))) return candidate;
    dir = dirname(dir);
  }
  throw new Error('cannot find the schemas/ folder of the Steward package');
}
