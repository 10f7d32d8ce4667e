import { type JSONSchema, type ObserveResult, TerminalError } from '../../sdk/index.js';
import type { Resource } from '../model.js';
import type { LeaseRef, SyncWriteBack } from '../ports.js';
import { eventFor } from '../requests/documents.js';
import { configBytes } from '../requests/quotas.js';
import { decideSyncWriteBack } from './decide-sync-write-back.js';
import { computeDrift, driftEvents } from './drift.js';
import { nextResyncAt, type OutcomeOptions, writeBackOf } from './write-back-fields.js';

/**
 * What `observe` read, written: an import completes with what it found (or fails at once when
 * there is nothing), a refresh or an observe-mode sync completes with the drift it found, an
 * observe-mode re-sync stays COMPLETED with it. Output and data are replaced when observe gave them.
 */
export function decideObserved(
  resource: Resource,
  lease: LeaseRef,
  observed: ObserveResult,
  options: OutcomeOptions,
  nowMs: number,
  random: () => number,
): SyncWriteBack {
  const action = resource.state.action;
  if (action === 'import' && !observed.exists && lease.claimedStatus === 'PENDING') {
    const missing = new TerminalError(
      `nothing to import: the ${resource.kind} module found no backend object for ${resource.urn}`,
    );
    return decideSyncWriteBack(
      resource,
      lease,
      { type: 'failure', error: missing },
      options,
      nowMs,
      random,
    );
  }
  const importing = action === 'import' && lease.claimedStatus === 'PENDING';
  const configs = importing
    ? filledConfigs(resource.spec.configs, observed.configs, options.configSchema)
    : undefined;
  const checkedAt = new Date(nowMs).toISOString();
  const drift = computeDrift(
    configs ?? resource.spec.configs,
    observed,
    options.configSchema,
    checkedAt,
  );
  const operationId = resource.state.operation_id;
  const written = {
    status: 'COMPLETED' as const,
    output: observed.output,
    // Only an import adopts: observe's data is the holder's mark (the file module's `written`), and
    // a refresh of a resource whose create was refused must not make it the holder of what it found.
    data: importing && observed.data !== undefined ? { value: observed.data } : undefined,
    configs,
    drift: { value: drift },
    attempts: 0,
    lastError: null,
    nextSyncAtMs: nextResyncAt(options, nowMs, random),
  };
  const specBytes = configs && {
    specBytesAdded: configBytes(configs) - configBytes(resource.spec.configs),
  };
  const changes = driftEvents(resource, resource.state.drift, drift, operationId);
  if (lease.claimedStatus === 'COMPLETED') {
    const resync = {
      outcome: 'resync' as const,
      countsAttempt: false,
      wakeDependents: false,
      events: changes,
    };
    return writeBackOf(lease, Object.assign(resync, written, specBytes));
  }
  const completed = {
    outcome: action === 'import' ? ('imported' as const) : ('refreshed' as const),
    observedVersion: resource.version,
    operation: { status: 'succeeded' as const, error: null },
    countsAttempt: true,
    wakeDependents: true,
    events: [
      eventFor(resource, 'resource.status_changed', operationId, {
        from: resource.state.status,
        to: 'COMPLETED',
        action,
      }),
      eventFor(resource, 'operation.succeeded', operationId, { action }),
      ...changes,
    ],
  };
  return writeBackOf(lease, Object.assign(completed, written, specBytes));
}

/**
 * An import's configs: the request's, with each config observe read put in where the request
 * left it out. "Left out" is a config absent from the spec or equal to its schema default (the
 * accepted spec has the defaults filled in, so a left-out config with a default is no longer
 * absent); a config given equal to its default is taken from the backend as well, since it says
 * nothing the default did not (docs/decisions.md, "What an import fills in").
 */
export function filledConfigs(
  spec: Record<string, unknown>,
  observed: Record<string, unknown> | undefined,
  configSchema: JSONSchema | undefined,
): Record<string, unknown> | undefined {
  if (!observed) return undefined;
  const properties = (configSchema?.properties ?? {}) as Record<string, JSONSchema>;
  const filled = { ...spec };
  for (const [key, value] of Object.entries(observed)) {
    if (value === undefined) continue;
    const fallback = Object.hasOwn(properties, key) ? properties[key]?.default : undefined;
    const leftOut =
      !Object.hasOwn(spec, key) ||
      (fallback !== undefined && JSON.stringify(spec[key]) === JSON.stringify(fallback));
    if (leftOut) filled[key] = value;
  }
  return filled;
}
