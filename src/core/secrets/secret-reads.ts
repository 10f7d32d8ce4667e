import type { Registry } from '../modules/registry.js';
import {
  ALL_PROJECTS,
  assertResourceInScope,
  type ProjectScope,
  resourceNotFound,
} from '../requests/scope.js';
import { OUTPUT } from './sealed-resources.js';
import type { SealedStore } from './sealing-store.js';
import { pickSecrets } from './secrets.js';

/** A resource's secret outputs, opened: the one answer that holds secrets (GET …/secrets, admins only). */
export interface SecretOutputRead {
  urn: string;
  version: number;
  /** Only the writeOnly values of `state.output`, in their places. */
  output: Record<string, unknown>;
  /** The fields read, as JSON pointers (`/state/output/token`): what the audit line records. */
  fields: string[];
  /** Secret outputs no configured key opens: each field, its key id and why (never the value). */
  unreadable: Array<{ field: string; key_id: string | null; message: string }>;
}

/**
 * The admin's explicit read of secret outputs. Secret configs are not returned:
 * whoever set them has them, and this read is for what the module made (a
 * generated password, a token). Authorization and the audit line are the API's.
 */
export function createSecretReads({
  store,
  registry,
}: {
  store: Pick<SealedStore, 'findResource' | 'unreadableSecretsOf'>;
  registry: Registry;
}) {
  return {
    async readSecretOutput(
      urn: string,
      scope: ProjectScope = ALL_PROJECTS,
    ): Promise<SecretOutputRead> {
      assertResourceInScope(scope, urn);
      const resource = await store.findResource(urn);
      if (!resource) throw resourceNotFound(urn, false);
      const schema = registry.find(resource.kind)?.definition.outputSchema;
      const output = (pickSecrets(resource.state.output, schema) ?? {}) as Record<string, unknown>;
      const unreadable = store
        .unreadableSecretsOf(resource)
        .filter((u) => u.pointer.startsWith(`${OUTPUT}/`));
      return {
        urn,
        version: resource.version,
        output,
        fields: Object.keys(output).map(
          (key) => `/state/output/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`,
        ),
        unreadable: unreadable.map((u) => ({
          field: u.pointer,
          key_id: u.keyId ?? null,
          message: u.message,
        })),
      };
    },
  };
}

export type SecretReads = ReturnType<typeof createSecretReads>;
