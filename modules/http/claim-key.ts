import type { JSONSchema } from '../../src/sdk/index.js';

/**
 * The claim key of an HTTP module (the description's `claim_key`): only the remote
 * knows which configs name its backend object, so it names them and Steward keys
 * each resource by their values. Without `claim_key` a kind's resources hold no claim.
 */

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `claim_key`: a non-empty list of distinct top-level configs of `config_schema`,
 * none a secret (a claim key is stored and shown in plain text). Answers the
 * fields, undefined for none, or the problem.
 */
export function claimKeyFieldsOf(
  value: unknown,
  schema: JSONSchema,
): string[] | undefined | string {
  if (value == null) return undefined;
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((f) => typeof f === 'string') ||
    new Set(value).size !== value.length
  )
    return 'claim_key must be a non-empty list of distinct config names, or null';
  const properties = (isRecord(schema.properties) ? schema.properties : {}) as Record<
    string,
    unknown
  >;
  for (const field of value as string[]) {
    const property = properties[field];
    if (!isRecord(property))
      return `claim_key names "${field}", which config_schema does not define`;
    if (property.writeOnly === true)
      return `claim_key names "${field}", a secret (writeOnly): a claim key is stored and shown in plain text`;
  }
  return value as string[];
}

/** The claim key of a resource: its named configs' values, in order, as JSON (absent → null). */
export function claimKeyOf(fields: readonly string[], configs: Record<string, unknown>): string {
  return JSON.stringify(fields.map((f) => configs[f] ?? null));
}
