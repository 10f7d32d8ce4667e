import type { Resource } from '../model.js';
import type { Registry } from '../modules/registry.js';
import type { ResourcePages, ResourceReads, SecretRewrites, ValuesRewrite } from '../ports.js';
import type { WebhookBook } from '../webhooks/webhook.js';
import type { Resealed, ResourceSecrets } from './sealed-resources.js';
import type { SecretBox } from './secret-box.js';
import { rotateWebhookSecrets, type WebhookRotationReport } from './webhook-secret-rotation.js';

export interface RotationOptions {
  /** Resources read and rewritten per transaction. */
  batchSize: number;
  /** Leave out the values no configured key opens (their key is lost for good). @default false */
  forget?: boolean;
  /** Called after each batch with the totals so far (progress). */
  onBatch?: (report: RotationReport) => void;
}

export interface RotationReport {
  /** The key every secret is now sealed with. */
  key_id: string;
  resources: number;
  /** Resources whose stored configs or output were rewritten. */
  rewritten: number;
  /** Values sealed with an older key, sealed again with the current one. */
  resealed: number;
  /** Plaintext values (stored before there was a key), now sealed. */
  sealed: number;
  /** Values that were already sealed with the current key. */
  current: number;
  /** Values no configured key opens: left as they are, or left out with `forget`. */
  unreadable: Array<{ urn: string; field: string; key_id: string | null; message: string }>;
  forgotten: number;
  /** Resources that kept changing under the rotation (a sync writing them): run it again. */
  changed: string[];
  /** Kinds with stored resources but no loaded module: their plaintext secrets cannot be found. */
  kinds_not_loaded: string[];
  /** The webhooks' signing secrets, sealed in the same run after the resources. */
  webhooks: WebhookRotationReport;
}

/** A resource that changed between read and rewrite is read and tried again this often. */
const MAX_RETRIES = 3;

/**
 * `steward secrets rotate`: walks every resource in URN order, one batch per
 * transaction, and seals every secret with the current key (older keys' values
 * re-sealed, plaintext sealed). Each rewrite is a compare-and-set on the values
 * read, so a sync writing the same resource meanwhile wins and the resource is
 * read again. Running it again finds nothing to do.
 */
export async function rotateSecrets(
  {
    store,
    registry,
    secrets,
    box,
  }: {
    /** The undecorated store: rotation reads and writes the values as they are stored. */
    store: Pick<ResourceReads, 'findResource'> &
      Pick<ResourcePages, 'listResources'> &
      SecretRewrites &
      Pick<WebhookBook, 'listWebhooks' | 'findWebhook' | 'replaceWebhookSecret'>;
    registry: Registry;
    secrets: ResourceSecrets;
    /** The box `secrets` seals with: webhook secrets are sealed with it too. */
    box: SecretBox;
  },
  options: RotationOptions,
): Promise<RotationReport> {
  const keyId = secrets.keyId;
  if (!keyId) throw new Error('STEWARD_SECRET_KEY is not set: rotation seals every secret with it');
  const report: RotationReport = {
    key_id: keyId,
    resources: 0,
    rewritten: 0,
    resealed: 0,
    sealed: 0,
    current: 0,
    unreadable: [],
    forgotten: 0,
    changed: [],
    kinds_not_loaded: [],
    webhooks: { webhooks: 0, resealed: 0, sealed: 0, current: 0, unreadable: [], changed: [] },
  };
  const notLoaded = new Set<string>();

  const tally = (urn: string, result: Resealed, written: boolean) => {
    report.current += result.current;
    report.unreadable.push(
      ...result.unreadable.map((u) => ({
        urn,
        field: u.pointer,
        key_id: u.keyId ?? null,
        message: u.message,
      })),
    );
    if (!written) return;
    report.rewritten += 1;
    report.resealed += result.resealed;
    report.sealed += result.sealed;
    if (options.forget) report.forgotten += result.unreadable.length;
  };
  const plan = (resource: Resource): { result: Resealed; change?: ValuesRewrite } => {
    if (!registry.find(resource.kind)) notLoaded.add(resource.kind);
    const result = secrets.reseal(resource, { forget: options.forget });
    const changes =
      result.resealed + result.sealed + (options.forget ? result.unreadable.length : 0);
    if (changes === 0) return { result };
    return {
      result,
      change: {
        urn: resource.urn,
        before: { configs: resource.spec.configs, output: resource.state.output },
        after: { configs: result.resource.spec.configs, output: result.resource.state.output },
      },
    };
  };

  let after: string | undefined;
  for (;;) {
    const page = await store.listResources({}, options.batchSize, after);
    if (page.length === 0) break;
    report.resources += page.length;
    const planned = page.map(plan);
    const writes = planned.filter((p) => p.change);
    const applied = await store.replaceConfigsAndOutput(writes.map((p) => p.change!));
    for (const p of planned.filter((p) => !p.change)) tally(p.result.resource.urn, p.result, false);
    for (const [i, p] of writes.entries()) {
      if (applied[i]) tally(p.change!.urn, p.result, true);
      else await retry(p.change!.urn);
    }
    options.onBatch?.(report);
    after = page.at(-1)!.urn;
    if (page.length < options.batchSize) break;
  }
  report.kinds_not_loaded = [...notLoaded].sort();
  report.webhooks = await rotateWebhookSecrets({ store, box }, options.batchSize);
  return report;

  async function retry(urn: string): Promise<void> {
    for (let i = 0; i < MAX_RETRIES; i += 1) {
      const resource = await store.findResource(urn);
      if (!resource) return; // deleted meanwhile: nothing left to seal
      const { result, change } = plan(resource);
      if (!change) return tally(urn, result, false);
      const [done] = await store.replaceConfigsAndOutput([change]);
      if (done) return tally(urn, result, true);
    }
    report.changed.push(urn);
  }
}
