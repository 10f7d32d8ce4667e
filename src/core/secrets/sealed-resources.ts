import type { ModuleDefinition, ResolvedDependency } from '../../sdk/index.js';
import type { Resource } from '../model.js';
import { isSealed, sealedKeyId, type SecretBox, UnreadableSecretError } from './secret-box.js';
import { findSealed, mapSealed, OMIT, sealSecrets, secretStrings } from './secrets.js';
import type { UnreadableSecret } from './unreadable-secrets.js';

/** What rotation did to one resource. */
export interface Resealed {
  resource: Resource;
  /** Values sealed with an older key, now sealed with the current one. */
  resealed: number;
  /** Plaintext values (written before there was a key), now sealed. */
  sealed: number;
  /** Values already sealed with the current key. */
  current: number;
  /** Values no configured key opens (left as they are, or left out with `forget`). */
  unreadable: UnreadableSecret[];
}

export type SchemasOf = (
  kind: string,
) => Pick<ModuleDefinition, 'configSchema' | 'outputSchema'> | undefined;

const CONFIGS = '/spec/configs';
/** Where a resource's output values are: their pointers start with it. */
export const OUTPUT = '/state/output';

/**
 * Secrets at rest, for whole resources: sealingStore opens what the store returns
 * before a module (or a comparison) sees it, and seals what it hands the store.
 * Without STEWARD_SECRET_KEY nothing is sealed and plaintext is read as it is.
 * The store never knows: it keeps configs and output as the JSON it is given.
 */
export function createResourceSecrets(box: SecretBox, schemasOf: SchemasOf) {
  /** The additional authenticated data: a sealed value opens only in its resource and field. */
  const placeOf = (urn: string, pointer: string) => `${urn}#${pointer}`;

  function sealValue(urn: string, value: unknown, pointer: string): unknown {
    // A value still sealed here is one that could not be opened: it is put back as it was stored.
    return isSealed(value) ? value : box.seal(JSON.stringify(value), placeOf(urn, pointer));
  }

  /** Opens one sealed value found at `pointer`; what does not open is described, never shown. */
  function openOne(
    urn: string,
    sealed: string,
    pointer: string,
  ): { value: unknown } | { unreadable: UnreadableSecret } {
    try {
      return { value: JSON.parse(box.open(sealed, placeOf(urn, pointer))) as unknown };
    } catch (err) {
      const reason = err instanceof UnreadableSecretError ? err.reason : 'malformed';
      const why = err instanceof UnreadableSecretError ? err.message : 'it does not hold JSON';
      return {
        unreadable: {
          pointer,
          reason,
          keyId: sealedKeyId(sealed),
          message: `secret ${pointer} of ${urn}: ${why}`,
          sealed,
        },
      };
    }
  }

  function openPart(
    urn: string,
    value: Record<string, unknown>,
    at: string,
    unreadable: UnreadableSecret[],
  ): Record<string, unknown> {
    if (findSealed(value) === undefined) return value;
    return mapSealed(value, at, (sealed, pointer) => {
      const opened = openOne(urn, sealed, pointer);
      if ('value' in opened) return opened.value;
      unreadable.push(opened.unreadable);
      return OMIT;
    }) as Record<string, unknown>;
  }

  function sealPart(
    resource: Pick<Resource, 'urn' | 'kind'>,
    value: Record<string, unknown>,
    schema: Parameters<typeof sealSecrets>[1],
    at: string,
  ): Record<string, unknown> {
    if (box.keyId === undefined || !schema) return value;
    return sealSecrets(value, schema, at, (plain, pointer) =>
      sealValue(resource.urn, plain, pointer),
    ) as Record<string, unknown>;
  }

  /** Every sealed value opened; those that do not open are left out and listed. */
  function open(resource: Resource): { resource: Resource; unreadable: UnreadableSecret[] } {
    const unreadable: UnreadableSecret[] = [];
    const configs = openPart(resource.urn, resource.spec.configs, CONFIGS, unreadable);
    const output = openPart(resource.urn, resource.state.output, OUTPUT, unreadable);
    if (configs === resource.spec.configs && output === resource.state.output)
      return { resource, unreadable };
    return {
      resource: {
        ...resource,
        spec: { ...resource.spec, configs },
        state: { ...resource.state, output },
      },
      unreadable,
    };
  }

  /** The document to store: writeOnly configs and output sealed (with a key), and the values that did not open put back. */
  function seal(resource: Resource, carried: readonly UnreadableSecret[] = []): Resource {
    const schemas = schemasOf(resource.kind);
    const sealing = box.keyId !== undefined && schemas !== undefined;
    if (!sealing && carried.length === 0) return resource;
    const sealer = (value: unknown, pointer: string) => sealValue(resource.urn, value, pointer);
    let configs = sealing
      ? (sealSecrets(resource.spec.configs, schemas.configSchema, CONFIGS, sealer) as Record<
          string,
          unknown
        >)
      : resource.spec.configs;
    let output = sealing
      ? (sealSecrets(resource.state.output, schemas.outputSchema, OUTPUT, sealer) as Record<
          string,
          unknown
        >)
      : resource.state.output;
    if (carried.length) {
      // putBack writes in place: never into objects the caller still holds.
      configs = structuredClone(configs);
      output = structuredClone(output);
    }
    for (const value of carried) {
      if (value.pointer.startsWith(`${CONFIGS}/`))
        configs = putBack(configs, value.pointer.slice(CONFIGS.length), value.sealed);
      else if (value.pointer.startsWith(`${OUTPUT}/`))
        output = putBack(output, value.pointer.slice(OUTPUT.length), value.sealed);
    }
    return {
      ...resource,
      spec: { ...resource.spec, configs },
      state: { ...resource.state, output },
    };
  }

  return {
    /** The current key's id; undefined when secrets are stored as plaintext. */
    keyId: box.keyId,
    previousKeyIds: box.previousKeyIds,
    open,
    seal,

    /** A sync result's output as it is stored: its writeOnly values sealed for this resource. */
    sealOutput(
      resource: Pick<Resource, 'urn' | 'kind'>,
      output: Record<string, unknown>,
    ): Record<string, unknown> {
      return sealPart(resource, output, schemasOf(resource.kind)?.outputSchema, OUTPUT);
    },

    /** Configs a sync writes back (an import's filled-in ones) as they are stored: writeOnly values sealed, like an accepted spec's. */
    sealConfigs(
      resource: Pick<Resource, 'urn' | 'kind'>,
      configs: Record<string, unknown>,
    ): Record<string, unknown> {
      return sealPart(resource, configs, schemasOf(resource.kind)?.configSchema, CONFIGS);
    },

    /**
     * Rotation: every value sealed with an older key sealed again with the current
     * one, and every plaintext writeOnly value sealed. A value no key opens stays as
     * it is, or is left out with `forget` (the operator gave up its key).
     */
    reseal(resource: Resource, options: { forget?: boolean } = {}): Resealed {
      if (box.keyId === undefined) throw new Error('rotation needs STEWARD_SECRET_KEY');
      const counts = { resealed: 0, sealed: 0, current: 0 };
      const unreadable: UnreadableSecret[] = [];
      const rewrite = (value: Record<string, unknown>, at: string) =>
        mapSealed(value, at, (sealed, pointer) => {
          if (sealedKeyId(sealed) === box.keyId) {
            counts.current += 1;
            return sealed;
          }
          const opened = openOne(resource.urn, sealed, pointer);
          if ('unreadable' in opened) {
            unreadable.push(opened.unreadable);
            return options.forget ? OMIT : sealed;
          }
          counts.resealed += 1;
          return box.seal(JSON.stringify(opened.value), placeOf(resource.urn, pointer));
        }) as Record<string, unknown>;
      const schemas = schemasOf(resource.kind);
      const sealPlain = (
        value: Record<string, unknown>,
        schema: Parameters<typeof sealSecrets>[1],
        at: string,
      ) =>
        sealSecrets(value, schema, at, (plain, pointer) => {
          if (isSealed(plain)) return plain;
          counts.sealed += 1;
          return box.seal(JSON.stringify(plain), placeOf(resource.urn, pointer));
        }) as Record<string, unknown>;
      const configs = sealPlain(
        rewrite(resource.spec.configs, CONFIGS),
        schemas?.configSchema,
        CONFIGS,
      );
      const output = sealPlain(
        rewrite(resource.state.output, OUTPUT),
        schemas?.outputSchema,
        OUTPUT,
      );
      return {
        resource: {
          ...resource,
          spec: { ...resource.spec, configs },
          state: { ...resource.state, output },
        },
        ...counts,
        unreadable,
      };
    },
  };
}

export type ResourceSecrets = ReturnType<typeof createResourceSecrets>;

/** The strings of the resource's secrets and its dependencies' secret outputs (opened), to keep out of error messages. */
export function secretStringsOf(
  resource: Resource,
  dependencies: Record<string, ResolvedDependency>,
  schemasOf: SchemasOf,
): string[] {
  const schemas = schemasOf(resource.kind);
  const own = [
    ...secretStrings(resource.spec.configs, schemas?.configSchema),
    ...secretStrings(resource.state.output, schemas?.outputSchema),
  ];
  const ofDependencies = Object.values(dependencies).flatMap((dep) =>
    secretStrings(dep.output, schemasOf(dep.kind)?.outputSchema),
  );
  return [...own, ...ofDependencies];
}

/**
 * Sets `value` at `pointer` (relative, `/a/b`) when nothing is there and its parent
 * exists: a secret the request did not replace keeps what was stored.
 */
function putBack(
  root: Record<string, unknown>,
  pointer: string,
  value: string,
): Record<string, unknown> {
  const keys = pointer
    .split('/')
    .slice(1)
    .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'));
  let node: unknown = root;
  for (const key of keys.slice(0, -1)) {
    node =
      node !== null && typeof node === 'object'
        ? (node as Record<string, unknown>)[key]
        : undefined;
  }
  const last = keys.at(-1)!;
  if (Array.isArray(node)) {
    const index = Number(last);
    if (Number.isInteger(index) && index < node.length && node[index] === null) node[index] = value;
  } else if (node !== null && typeof node === 'object' && !Object.hasOwn(node, last)) {
    (node as Record<string, unknown>)[last] = value;
  }
  return root;
}
