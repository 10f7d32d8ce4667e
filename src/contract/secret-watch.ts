import type { CoreLogger } from '../core/logging.js';
import type { Resource } from '../core/model.js';
import type { Registry } from '../core/modules/registry.js';
import { resourceView } from '../core/requests/views.js';
import type { JSONSchema, ObserveResult } from '../sdk/index.js';
import { findLeaks, type Secret, secretValues } from './secret-leaks.js';

interface LogEntry {
  level: string;
  message: string;
  fields: Record<string, unknown>;
}

/**
 * Rule 8's eyes: remembers every secret value it is shown (writeOnly configs,
 * outputs and params, and the fixtures' secrets) and looks for them where nobody should find them: the
 * resource as the API returns it (`resourceView`: configs and output redacted,
 * `state.data`, `state.sync.last_error`, labels), every log line, what `observe`
 * returns (as an import would store it) and the message of every error the module throws.
 */
export function createSecretWatch(registry: Registry, kind: string) {
  const definition = registry.get(kind).definition;
  const secrets = new Map<string, Secret>();
  const leaks = new Map<string, string>();
  const entries: LogEntry[] = [];
  const fixtures = new Set<string>();
  let checkedLogs = 0;

  const remember = (found: Secret[]) => {
    for (const secret of found) secrets.set(`${secret.source}\0${secret.value}`, secret);
  };

  function capture(base: Record<string, unknown>): CoreLogger {
    const at =
      (level: string) =>
      (message: string, fields: Record<string, unknown> = {}) =>
        void entries.push({ level, message, fields: { ...base, ...fields } });
    return {
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
      child: (fields) => capture({ ...base, ...fields }),
    };
  }

  return {
    /** Where the core and the module log: every line is kept for the check. */
    logger: capture({}),
    rememberConfigs(configs: Record<string, unknown> | undefined): void {
      remember(secretValues(configs, definition.configSchema, 'spec.configs'));
    },
    rememberParams(action: string, params: unknown): void {
      remember(
        secretValues(
          params,
          definition.actions[action]?.paramsSchema as JSONSchema | undefined,
          `params of ${action}`,
        ),
      );
    },
    /**
     * A fixture's secrets (by its own kind's schemas) reach the module under test
     * as dependency outputs: they must not leak through it either. The fixture's
     * own log lines are not the module's, and are not looked at.
     */
    rememberFixture(
      fixture: Resource,
      schemas: { configSchema: JSONSchema; outputSchema?: JSONSchema },
    ): void {
      fixtures.add(fixture.urn);
      remember(
        secretValues(fixture.spec.configs, schemas.configSchema, `${fixture.urn} spec.configs`),
      );
      remember(
        secretValues(fixture.state.output, schemas.outputSchema, `${fixture.urn} state.output`),
      );
    },
    /** Checks the stored resource (secrets included) as the API would show it, and the logs written since the last check. */
    check(stored: Resource | undefined, where: string): void {
      if (stored) {
        remember(secretValues(stored.spec.configs, definition.configSchema, 'spec.configs'));
        remember(secretValues(stored.state.output, definition.outputSchema, 'state.output'));
      }
      const known = [...secrets.values()];
      const found = stored ? findLeaks(resourceView(stored, registry), 'resource', known) : [];
      for (const entry of entries.slice(checkedLogs)) {
        if (!fixtures.has(String(entry.fields.urn)))
          found.push(...findLeaks(entry.fields, `log line "${entry.message}"`, known));
      }
      checkedLogs = entries.length;
      for (const leak of found) if (!leaks.has(leak)) leaks.set(leak, where);
    },
    /**
     * What `observe` returned for `resource`, as an import would store and the API
     * show it: its configs laid over the spec's, its output and data in the state.
     */
    checkObserved(resource: Resource, observed: ObserveResult): void {
      if (!observed.exists) return;
      const imported: Resource = {
        ...resource,
        spec: { ...resource.spec, configs: { ...resource.spec.configs, ...observed.configs } },
        state: { ...resource.state, output: observed.output ?? {}, data: observed.data ?? null },
      };
      remember(secretValues(imported.spec.configs, definition.configSchema, 'spec.configs'));
      remember(secretValues(imported.state.output, definition.outputSchema, 'state.output'));
      const known = [...secrets.values()];
      for (const leak of findLeaks(resourceView(imported, registry), 'observed resource', known))
        if (!leaks.has(leak)) leaks.set(leak, "observe's result");
    },
    /** The message of an error the module threw (`what`: "an error sync threw"): it ends up in logs and reports. */
    checkError(error: unknown, what: string): void {
      const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      for (const secret of secrets.values())
        if (text.includes(secret.value)) {
          const leak = `the message of ${what.replace(/ in .*$/, '')} holds the value of ${secret.source}`;
          if (!leaks.has(leak)) leaks.set(leak, what);
        }
    },
    /** Every secret value known so far: the kit's own report must not quote one either. */
    values: (): string[] => [...new Set([...secrets.values()].map((secret) => secret.value))],
    /** Marks the log lines written so far as seen, unchecked (the fixtures' create and delete). */
    skipLogs(): void {
      checkedLogs = entries.length;
    },
    secretCount: () => secrets.size,
    /** Each leak once, with where it was first seen. */
    leaks: () => [...leaks].map(([leak, where]) => `${leak} (${where})`),
  };
}

export type SecretWatch = ReturnType<typeof createSecretWatch>;
