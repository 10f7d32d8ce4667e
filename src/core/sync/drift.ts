import type { JSONSchema } from '../../sdk/index.js';
import { jsonEqual } from '../json.js';
import type { Drift, DriftField, EventInput, Resource } from '../model.js';
import { eventFor } from '../requests/documents.js';
import { hasSecrets } from '../secrets/secrets.js';

/**
 * The drift between `spec.configs` and what `observe` read, by top-level config (pointer `/key`):
 * only the configs observe returned are compared, so a field the module cannot read, or
 * fills by default and does not report, is never drift. A config whose schema holds a secret
 * anywhere below it is compared but shown only as `{secret: true}`: drift is stored and shown
 * as it is, so it must never hold a secret value.
 */
export function computeDrift(
  desired: Record<string, unknown>,
  observed: { exists: boolean; configs?: Record<string, unknown> },
  configSchema: JSONSchema | undefined,
  checkedAt: string,
): Drift {
  const fields: Record<string, DriftField> = {};
  if (observed.exists) {
    for (const [key, actual] of Object.entries(observed.configs ?? {})) {
      if (actual === undefined || jsonEqual(desired[key], actual)) continue;
      fields[`/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`] = isSecretConfig(configSchema, key)
        ? { secret: true }
        : { desired: desired[key], actual };
    }
  }
  return { checked_at: checkedAt, exists: observed.exists, fields, error: null };
}

function isSecretConfig(schema: JSONSchema | undefined, key: string): boolean {
  const properties = (schema?.properties ?? {}) as Record<string, JSONSchema>;
  const child = Object.hasOwn(properties, key)
    ? properties[key]
    : (schema?.additionalProperties as JSONSchema | boolean | undefined);
  return typeof child === 'object' && child !== null && hasSecrets(child);
}

/** Drift found: the backend object is missing or some config differs. */
export function isDrifted(drift: Drift | null): boolean {
  return drift !== null && (!drift.exists || Object.keys(drift.fields).length > 0);
}

/** The last check failed: the fields and `exists` of the last check that worked stay. */
export function failedDrift(before: Drift | null, error: string, checkedAt: string): Drift {
  return {
    checked_at: checkedAt,
    exists: before?.exists ?? true,
    fields: before?.fields ?? {},
    error,
  };
}

/** A sync that made the backend match the spec: nothing differs any more. */
export function clearedDrift(checkedAt: string): Drift {
  return { checked_at: checkedAt, exists: true, fields: {}, error: null };
}

/**
 * The events of going from `before` to `after`: drifted / drift_cleared when drift appears
 * or goes, resync_failed / resync_recovered when the checks start or stop failing.
 */
export function driftEvents(
  resource: Resource,
  before: Drift | null,
  after: Drift,
  operationId: string,
): EventInput[] {
  const events: EventInput[] = [];
  const was = isDrifted(before);
  const is = isDrifted(after);
  if (is && !was)
    events.push(
      eventFor(resource, 'resource.drifted', operationId, {
        fields: Object.keys(after.fields),
        exists: after.exists,
      }),
    );
  if (was && !is && after.error === null)
    events.push(
      eventFor(resource, 'resource.drift_cleared', operationId, {
        fields: Object.keys(before!.fields),
      }),
    );
  const failing = before?.error != null;
  if (after.error !== null && !failing)
    events.push(eventFor(resource, 'resource.resync_failed', operationId, { error: after.error }));
  if (after.error === null && failing)
    events.push(eventFor(resource, 'resource.resync_recovered', operationId, {}));
  return events;
}
