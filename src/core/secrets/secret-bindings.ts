import type { ModuleDefinition } from '../../sdk/index.js';
import { InvalidRequestError } from '../errors.js';
import { jsonEqual } from '../json.js';

/**
 * A kept secret stays where its writer sent it. A PATCH that leaves a `writeOnly`
 * config out keeps the stored value (planning.ts, keepOmittedSecrets); without this
 * rule, anyone who may PATCH could keep the secret and change where it goes (a new
 * host, a new command), and the next sync would hand it over there.
 */

const DEPENDENCY_PREFIX = 'dependencies.';

/**
 * The problems with a module's `secretBindings` declaration, for the registry: keys
 * must be top-level writeOnly configs, and every bound field a config property or a
 * declared dependency.
 */
export function secretBindingProblems(
  def: Pick<ModuleDefinition, 'configSchema' | 'dependencies' | 'secretBindings'>,
): string[] {
  const bindings = def.secretBindings;
  if (bindings === undefined) return [];
  if (typeof bindings !== 'object' || bindings === null || Array.isArray(bindings))
    return ['secretBindings must be an object of arrays of field names'];
  const properties = (def.configSchema?.properties ?? {}) as Record<
    string,
    { writeOnly?: unknown } | undefined
  >;
  const dependencies = def.dependencies ?? {};
  const problems: string[] = [];
  for (const [secret, fields] of Object.entries(bindings)) {
    if (properties[secret]?.writeOnly !== true)
      problems.push(`secretBindings.${secret}: "${secret}" is not a top-level writeOnly config`);
    if (
      !Array.isArray(fields) ||
      fields.length === 0 ||
      fields.some((field) => typeof field !== 'string')
    ) {
      problems.push(`secretBindings.${secret} must be a non-empty array of field names`);
      continue;
    }
    for (const field of fields as string[]) {
      const known = field.startsWith(DEPENDENCY_PREFIX)
        ? Object.hasOwn(dependencies, field.slice(DEPENDENCY_PREFIX.length))
        : Object.hasOwn(properties, field) && field !== secret;
      if (!known)
        problems.push(
          `secretBindings.${secret}: "${field}" is neither a config property nor dependencies.NAME of a declared dependency`,
        );
    }
  }
  return problems;
}

export interface BindingChange {
  /** The configs and dependencies stored. */
  before: { configs: Record<string, unknown>; dependencies: Record<string, string> };
  /** The configs (defaults filled in, kept secrets put back) and dependencies requested. */
  after: { configs: Record<string, unknown>; dependencies: Record<string, string> };
  /** Secret configs the request sent (a PATCH's `configs` keys); none when it sent no configs. */
  sent: ReadonlySet<string>;
  /** Secret configs stored, readable or not (a sealed value that does not open is kept too). */
  stored: ReadonlySet<string>;
}

/**
 * Refuses (400 `invalid_request`, naming the secret and the fields) an update that
 * changes a field a stored secret is bound to without sending that secret again.
 */
export function refuseMovedSecrets(
  def: Pick<ModuleDefinition, 'kind' | 'secretBindings'>,
  change: BindingChange,
): void {
  const problems: Array<{ path: string; message: string }> = [];
  const sentences: string[] = [];
  for (const [secret, fields] of Object.entries(def.secretBindings ?? {})) {
    if (change.sent.has(secret) || !change.stored.has(secret)) continue;
    const moved = fields.filter(
      (field) => !jsonEqual(valueOf(change.before, field), valueOf(change.after, field)),
    );
    if (moved.length === 0) continue;
    for (const field of moved)
      problems.push({
        path: pathOf(field),
        message: `changed while the stored ${secret} would be kept`,
      });
    problems.push({
      path: `/spec/configs/${secret}`,
      message: `is required when ${fields.join(', ')} change: a kept ${secret} is not sent to a new ${moved.join(', ')}`,
    });
    sentences.push(
      `${moved.join(', ')} changed while the stored ${secret} would be kept; send ${secret} again with this change`,
    );
  }
  if (problems.length === 0) return;
  throw new InvalidRequestError(
    `configs of kind ${def.kind} are invalid: ${sentences.join('; ')}`,
    { problems },
  );
}

function valueOf(spec: BindingChange['before'], field: string): unknown {
  return field.startsWith(DEPENDENCY_PREFIX)
    ? spec.dependencies[field.slice(DEPENDENCY_PREFIX.length)]
    : spec.configs[field];
}

function pathOf(field: string): string {
  return field.startsWith(DEPENDENCY_PREFIX)
    ? `/spec/dependencies/${field.slice(DEPENDENCY_PREFIX.length)}`
    : `/spec/configs/${field}`;
}
