import { AlreadyExistsError, ModuleFaultError } from '../errors.js';
import { frozenCopy } from '../json.js';
import type { Resource } from '../model.js';
import type { RegisteredModule } from '../modules/registry.js';
import type { ClaimHolder } from '../ports.js';

/** Longer keys are a module bug: they would bloat the unique index (PostgreSQL caps an index entry near 2.7 kB). */
export const MAX_CLAIM_KEY_LENGTH = 2048;

/**
 * The backend object `resource` would hold (the module's `claimKey`), or null when
 * the kind declares none or the spec names none. Called with the spec as it will be
 * stored, secrets opened: the module promises not to put them in the key.
 */
export function claimKeyOf(module: RegisteredModule, resource: Resource): string | null {
  const { claimKey, kind } = module.definition;
  if (!claimKey) return null;
  const input = frozenCopy({
    project: resource.project,
    configs: resource.spec.configs,
    dependencies: resource.spec.dependencies,
  });
  let key: unknown;
  try {
    key = claimKey.call(module.definition, input);
  } catch (err) {
    // The message could quote a secret config: name the failure only.
    throw new ModuleFaultError(
      `claimKey of kind ${kind} failed (${(err as Error | undefined)?.name ?? 'a throw'})`,
    );
  }
  if (key === undefined) return null;
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_CLAIM_KEY_LENGTH) {
    throw new ModuleFaultError(
      `claimKey of kind ${kind} returned ${typeof key === 'string' ? `a string of ${key.length} characters` : typeof key}, not a key of 1 to ${MAX_CLAIM_KEY_LENGTH} characters`,
    );
  }
  return key;
}

/**
 * 409 for a create or update onto a key another resource holds. The holder is named
 * only when it is in the caller's project (`resource.project`: the caller may write
 * there); otherwise it is "another resource", so nothing outside that project shows.
 */
export function claimHeldError(
  resource: Resource,
  key: string,
  holder: ClaimHolder,
): AlreadyExistsError {
  const visible = holder.project === resource.project;
  const who = visible ? `resource ${holder.urn}` : 'another resource';
  return new AlreadyExistsError(
    `${who} already manages what ${resource.urn} names (${resource.kind} ${key}); two resources never manage one backend object: delete the holder first or choose another`,
    visible
      ? { urn: resource.urn, claim: key, holder: holder.urn }
      : { urn: resource.urn, claim: key },
  );
}
