import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { parseCreateBody, parseUpdateBody } from '../api/request-parsing.js';
import { loadBodySchemas } from '../api/schemas.js';
import type { CreateRequest, UpdateRequest } from '../core/requests/command-types.js';
import { substitute } from './substitute.js';

/**
 * One example resource of a module's `examples/` folder:
 * - `<name>.json`: a create body, nested or flat, as `POST /resources` takes it
 *   (`kind` may be left out);
 * - `<name>.actions.json` (optional): `{ "<action>": params }` for the module's
 *   actions; for `update` the value is a PATCH body. An action not named there
 *   gets `{}` (update: the same spec again).
 *
 * `${NAME}` in either file is replaced from the environment first (substitute.ts).
 */
export interface Example {
  name: string;
  create: CreateRequest;
  update: UpdateRequest;
  params: Record<string, unknown>;
}

/** What the example files are read with. */
export interface ExampleSource {
  kind: string;
  actions: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
}

const ACTIONS_SUFFIX = '.actions.json';

/** The folder of fixtures inside an examples folder: create bodies of what the examples depend on. */
export const FIXTURES_FOLDER = 'fixtures';

/** Reads and checks every example; a bad file is a problem to report, not a crash. */
export function readExamples(
  dir: string,
  { kind, actions, env }: ExampleSource,
): { examples: Example[]; problems: string[] } {
  if (!existsSync(dir))
    return {
      examples: [],
      problems: [`no examples: ${dir} does not exist (add <name>.json create bodies there)`],
    };
  const schemas = loadBodySchemas();
  const files = jsonFiles(dir).filter((file) => !file.endsWith(ACTIONS_SUFFIX));
  const examples: Example[] = [];
  const problems: string[] = [];
  if (files.length === 0) problems.push(`no examples: ${dir} has no <name>.json create bodies`);
  for (const file of files) {
    const name = file.slice(0, -'.json'.length);
    try {
      const create = parseCreateBody(schemas, withKind(readJson(dir, file, env), kind));
      if (create.kind !== kind)
        throw new Error(`its kind is "${create.kind}", the module's is "${kind}"`);
      const actionsFile = `${name}${ACTIONS_SUFFIX}`;
      const given = existsSync(join(dir, actionsFile))
        ? readJson(dir, actionsFile, env, `${actionsFile}: `)
        : {};
      if (typeof given !== 'object' || given === null || Array.isArray(given))
        throw new Error(`${actionsFile} must be an object of action → params`);
      const unknown = Object.keys(given).filter((action) => !actions.includes(action));
      if (unknown.length)
        throw new Error(
          `${actionsFile} names actions the module does not declare: ${unknown.join(', ')}`,
        );
      const { update: patch = {}, ...params } = given as Record<string, unknown>;
      const update = Object.keys(patch as object).length ? parseUpdateBody(schemas, patch) : {};
      examples.push({ name, create, update, params });
    } catch (err) {
      problems.push(`example ${file}: ${(err as Error).message}`);
    }
  }
  return { examples, problems };
}

/**
 * The fixtures: the `fixtures` bodies when the caller gave them, else every
 * `<examplesDir>/fixtures/*.json` in name order (none when the folder is absent).
 * `kind` defaults to the module's, as in examples.
 */
export function readFixtures(
  examplesDir: string | undefined,
  given: readonly unknown[] | undefined,
  { kind, env }: Pick<ExampleSource, 'kind' | 'env'>,
): { fixtures: Array<{ name: string; create: CreateRequest }>; problems: string[] } {
  const schemas = loadBodySchemas();
  const dir = examplesDir === undefined ? undefined : join(examplesDir, FIXTURES_FOLDER);
  const bodies: Array<{ name: string; body: () => unknown }> = given
    ? given.map((body, i) => ({ name: `fixtures[${i}]`, body: () => structuredClone(body) }))
    : dir && existsSync(dir)
      ? jsonFiles(dir).map((file) => ({
          name: `${FIXTURES_FOLDER}/${file}`,
          body: () => readJson(dir, file, env),
        }))
      : [];
  const fixtures: Array<{ name: string; create: CreateRequest }> = [];
  const problems: string[] = [];
  for (const { name, body } of bodies) {
    try {
      fixtures.push({ name, create: parseCreateBody(schemas, withKind(body(), kind)) });
    } catch (err) {
      problems.push(`fixture ${name}: ${(err as Error).message}`);
    }
  }
  return { fixtures, problems };
}

function jsonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.json'))
    .map((entry) => entry.name)
    .sort();
}

function withKind(body: unknown, kind: string): unknown {
  if (typeof body === 'object' && body !== null && !('kind' in body))
    (body as Record<string, unknown>).kind = kind;
  return body;
}

/** `where` prefixes a substitution error when the file is not the one the caller's message names. */
function readJson(dir: string, file: string, env: ExampleSource['env'], where = ''): unknown {
  const path = join(dir, file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    text = substitute(text, env);
  } catch (err) {
    throw new Error(`${where}${(err as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new Error(`${path} is not JSON (after \${…} substitution): ${(err as Error).message}`);
  }
}
