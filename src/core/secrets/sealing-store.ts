import type { Resource } from '../model.js';
import { parseUrn } from '../names.js';
import type { AcceptWrites, ResourceReads, SyncQueue, SyncWriteBack } from '../ports.js';
import type { ResourceSecrets } from './sealed-resources.js';
import type { UnreadableSecret } from './unreadable-secrets.js';

/** The ports whose documents hold secrets: what sealingStore opens and seals. */
export type SecretBearing = ResourceReads & AcceptWrites & SyncQueue;

/** What the sealing decorator adds to the ports it wraps. */
export interface OpenedSecrets {
  /**
   * The sealed values of `resource` (a document this store returned) that no configured key
   * opens: they are left out of it, and put back when a change planned from it is committed
   * (`AcceptedChange.current`) unless the change sets them again. Empty for any other document.
   */
  unreadableSecretsOf(resource: Resource): readonly UnreadableSecret[];
}

export type SealedStore = SecretBearing & OpenedSecrets;

/**
 * Secrets at rest as a decorator of the store: the resources it returns (found, or claimed
 * for a sync) have every sealed value opened, and what it is given to write has every
 * writeOnly config and output sealed (with STEWARD_SECRET_KEY; without one, plaintext passes
 * through). So plan, sync, PATCH's kept secrets and the "did anything change" comparison work
 * on values, and the store underneath keeps configs and output as the JSON it is given.
 *
 * Views (queries, events) read the undecorated store: they redact, and a sealed value is
 * redacted even where a schema no longer marks it writeOnly. Rotation reads it too: it must
 * see the sealed values as they are.
 */
export function sealingStore(store: SecretBearing, secrets: ResourceSecrets): SealedStore {
  const unreadable = new WeakMap<Resource, readonly UnreadableSecret[]>();
  const unreadableSecretsOf = (resource: Resource) => unreadable.get(resource) ?? [];

  function open(stored: Resource): Resource {
    const opened = secrets.open(stored);
    if (opened.unreadable.length) unreadable.set(opened.resource, opened.unreadable);
    return opened.resource;
  }

  /** The output, and an import's filled-in configs, of a write-back sealed. */
  function sealOutput(writeBack: SyncWriteBack): SyncWriteBack {
    if (writeBack.output === undefined && writeBack.configs === undefined) return writeBack;
    const resource = { urn: writeBack.urn, kind: parseUrn(writeBack.urn).kind };
    return {
      ...writeBack,
      ...(writeBack.output && { output: secrets.sealOutput(resource, writeBack.output) }),
      ...(writeBack.configs && { configs: secrets.sealConfigs(resource, writeBack.configs) }),
    };
  }

  return {
    unreadableSecretsOf,
    async findResource(urn) {
      const stored = await store.findResource(urn);
      return stored && open(stored);
    },
    findResources: async (urns) => (await store.findResources(urns)).map(open),
    findDependents: (urn) => store.findDependents(urn),
    findOperation: (id) => store.findOperation(id),
    findClaimHolder: (kind, key) => store.findClaimHolder(kind, key),

    commitAccepted: (change) =>
      store.commitAccepted({
        ...change,
        resource: secrets.seal(
          change.resource,
          change.current ? unreadableSecretsOf(change.current) : [],
        ),
      }),
    commitAcceptedBatch: (changes) =>
      store.commitAcceptedBatch(
        changes.map((change) => ({
          ...change,
          resource: secrets.seal(
            change.resource,
            change.current ? unreadableSecretsOf(change.current) : [],
          ),
        })),
      ),
    commitCancel: (cancel) => store.commitCancel(cancel),
    commitPause: (change) => store.commitPause(change),

    async claimDue(claim) {
      const batch = await store.claimDue(claim);
      return {
        ...batch,
        work: batch.work.map((work) => ({ ...work, resource: open(work.resource) })),
      };
    },
    saveSyncResults: (results, nowMs) =>
      store.saveSyncResults(secrets.keyId === undefined ? results : results.map(sealOutput), nowMs),
    renewLeases: (leases, nowMs, leaseMs) => store.renewLeases(leases, nowMs, leaseMs),
    scheduleResync: (kinds, nowMs) => store.scheduleResync(kinds, nowMs),
    releaseLeases: (leases, nowMs) => store.releaseLeases(leases, nowMs),
  };
}
