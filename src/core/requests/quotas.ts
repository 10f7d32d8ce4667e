import { ModuleFaultError, QuotaExceededError } from '../errors.js';
import { frozenCopy } from '../json.js';
import type { Resource } from '../model.js';
import type { RegisteredModule } from '../modules/registry.js';
import type { Footprint, QuotaLimits, QuotaName, QuotaRefusal } from '../ports.js';

/** The operator's quota settings (src/config.ts reads them); 0 is no quota. */
export interface QuotaSettings {
  quotaProjectResources: number;
  quotaResources: number;
  quotaProjectBytes: number;
  quotaBytes: number;
  quotaProjectProcesses: number;
  quotaProcesses: number;
  revisionRetention: number;
}

export interface Quotas {
  limits: QuotaLimits;
  /** STEWARD_REVISION_RETENTION: newest revisions kept per resource; 0 keeps all. */
  keepRevisions: number;
}

/** The setting of each quota, for refusals and docs. */
export const QUOTA_SETTINGS: Readonly<Record<'project' | 'global', Record<QuotaName, string>>> =
  Object.freeze({
    project: {
      resources: 'STEWARD_QUOTA_PROJECT_RESOURCES',
      bytes: 'STEWARD_QUOTA_PROJECT_BYTES',
      processes: 'STEWARD_QUOTA_PROJECT_PROCESSES',
    },
    global: {
      resources: 'STEWARD_QUOTA_RESOURCES',
      bytes: 'STEWARD_QUOTA_BYTES',
      processes: 'STEWARD_QUOTA_PROCESSES',
    },
  });

export function resolveQuotas(settings: QuotaSettings): Quotas {
  return Object.freeze({
    limits: Object.freeze({
      project: Object.freeze({
        resources: settings.quotaProjectResources,
        bytes: settings.quotaProjectBytes,
        processes: settings.quotaProjectProcesses,
      }),
      global: Object.freeze({
        resources: settings.quotaResources,
        bytes: settings.quotaBytes,
        processes: settings.quotaProcesses,
      }),
    }),
    keepRevisions: settings.revisionRetention,
  });
}

/** No quota anywhere, every revision kept: for stores and tests that do not configure any. */
export const NO_QUOTAS: Quotas = resolveQuotas({
  quotaProjectResources: 0,
  quotaResources: 0,
  quotaProjectBytes: 0,
  quotaBytes: 0,
  quotaProjectProcesses: 0,
  quotaProcesses: 0,
  revisionRetention: 0,
});

/**
 * What a resource counts against the quotas, from its spec as it will be stored:
 * - `specBytes`: the UTF-8 bytes of the JSON of its configs (secrets counted in clear, before
 *   sealing), dependencies and labels. Revisions, operations, events, output and data do not
 *   count: revisions are bounded by STEWARD_REVISION_RETENTION, output and data by
 *   STEWARD_MAX_STATE_BYTES.
 * - `processes`: what the module's `usage` declares (0 for kinds without `usage`).
 */
export function footprintOf(module: RegisteredModule, resource: Resource): Footprint {
  const { configs, dependencies } = resource.spec;
  const specBytes =
    configBytes(configs) +
    utf8Bytes(JSON.stringify(dependencies)) +
    utf8Bytes(JSON.stringify(resource.labels));
  return { specBytes, processes: declaredProcesses(module, resource) };
}

/** What a resource's configs count towards its `specBytes`: the UTF-8 bytes of their JSON. */
export function configBytes(configs: Record<string, unknown>): number {
  return utf8Bytes(JSON.stringify(configs));
}

function declaredProcesses(module: RegisteredModule, resource: Resource): number {
  const { usage, kind } = module.definition;
  if (!usage) return 0;
  let declared: unknown;
  try {
    declared = usage(
      frozenCopy({
        project: resource.project,
        configs: resource.spec.configs,
        dependencies: resource.spec.dependencies,
      }),
    );
  } catch (err) {
    throw new ModuleFaultError(
      `module ${kind}: usage threw: ${(err as Error)?.message ?? String(err)}`,
    );
  }
  // Names other than the built-in quotas are the module's own business: not counted, not refused.
  const processes = (declared as Record<string, unknown> | null | undefined)?.processes ?? 0;
  if (typeof processes !== 'number' || !Number.isSafeInteger(processes) || processes < 0) {
    throw new ModuleFaultError(
      `module ${kind}: usage returned processes ${JSON.stringify(processes)}, not a whole number of at least 0`,
    );
  }
  return processes;
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

const WHAT: Record<QuotaName, string> = {
  resources: 'resources',
  bytes: 'bytes of stored spec',
  processes: 'processes',
};

/** The refusal as the API answers it (403 quota_exceeded). */
export function quotaExceeded(project: string, { refused }: QuotaRefusal): QuotaExceededError {
  const setting = QUOTA_SETTINGS[refused.scope][refused.quota];
  const where = refused.scope === 'project' ? `project ${project}` : 'Steward (all projects)';
  const message =
    `${where} would go past its quota of ${refused.max} ${WHAT[refused.quota]} (${setting}): ` +
    `${refused.used} in use, this request adds ${refused.requested}`;
  return new QuotaExceededError(message, {
    quota: refused.quota,
    scope: refused.scope,
    setting,
    max: refused.max,
    used: refused.used,
    requested: refused.requested,
    ...(refused.scope === 'project' ? { project } : {}),
  });
}
