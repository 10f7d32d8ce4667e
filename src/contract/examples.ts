import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCreateBody, parseUpdateBody } from '../api/request-parsing.js';
import { loadBodySchemas } from '../api/schemas.js';
import type { CreateRequest, UpdateRequest } from '../core/resource-commands.js';

/**
 * One example resource of a module's `examples/` folder:
 * - `<name>.json`: a create body, nested or flat, as `POST /resources` takes it
 *   (`kind` may be left out);
 * - `<name>.actions.json` (optional): `{ "<action>": params }` for the module's
 *   actions; for `update` the value is a PATCH body. An action not named there
 *   gets `{}` (update: the same spec again).
 */
export interface Example {
  name: string;
  create: CreateRequest;
  update: UpdateRequest;
  params: Record<string, unknown>;
}

const ACTIONS_SUFFIX = '.actions.json';

/** Reads and checks every example; a bad file is a problem to report, not a crash. */
export function readExamples(dir: string, kind: string, actions: readonly string[]): { examples: Example[]; problems: string[] } {
  if (!existsSync(dir)) return { examples: [], problems: [`no examples: ${dir} does not exist (add <name>.json create bodies there)`] };
  const schemas = loadBodySchemas();
  const files = readdirSync(dir).filter((file) => file.endsWith('.json') && !file.endsWith(ACTIONS_SUFFIX)).sort();
  const examples: Example[] = [];
  const problems: string[] = [];
  if (files.length === 0) problems.push(`no examples: ${dir} has no <name>.json create bodies`);
  for (const file of files) {
    const name = file.slice(0, -'.json'.length);
    try {
      const body = readJson(join(dir, file));
      if (typeof body === 'object' && body !== null && !('kind' in body)) (body as Record<string, unknown>).kind = kind;
      const create = parseCreateBody(schemas, body);
      if (create.kind !== kind) throw new Error(`its kind is "${create.kind}", the module's is "${kind}"`);
      const actionsFile = join(dir, `${name}${ACTIONS_SUFFIX}`);
      const given = existsSync(actionsFile) ? readJson(actionsFile) : {};
      if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new Error(`${name}${ACTIONS_SUFFIX} must be an object of action → params`);
      const unknown = Object.keys(given).filter((action) => !actions.includes(action));
      if (unknown.length) throw new Error(`${name}${ACTIONS_SUFFIX} names actions the module does not declare: ${unknown.join(', ')}`);
      const { update: patch = {}, ...params } = given as Record<string, unknown>;
      const update = Object.keys(patch as object).length ? parseUpdateBody(schemas, patch) : {};
      examples.push({ name, create, update, params });
    } catch (err) {
      problems.push(`example ${file}: ${(err as Error).message}`);
    }
  }
  return { examples, problems };
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
}
