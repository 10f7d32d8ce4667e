import { defineModule, type ModuleDefinition } from '../../src/sdk/index.js';
import { claimKeyOf } from './claim-key.js';
import { fetchDescription, postObserve, postSync } from './client.js';
import { createPlan } from './plan.js';

export interface HttpModuleOptions {
  /** Timeout of one call to an endpoint (STEWARD_HTTP_MODULE_TIMEOUT_MS). */
  timeoutMs: number;
  /** For every call (default: the global fetch). */
  fetch?: typeof globalThis.fetch;
}

/**
 * `http` modules: kinds whose plan and sync are served by an HTTP endpoint, in any
 * language (docs/http-modules.md). Fetches each endpoint's description
 * (`GET {endpoint}/module`) and builds a module of it. An endpoint that cannot be
 * reached, or answers a bad description, throws an Error naming it, which stops
 * start-up; the registry then checks the definition like any other (origin = the URL).
 *
 * @example
 * const modules = await loadHttpModules(['http://127.0.0.1:9000'], { timeoutMs: 10_000 });
 * // [{ definition: { kind: 'kv_entry', …, plan, sync }, origin: 'http://127.0.0.1:9000' }]
 */
export async function loadHttpModules(
  endpoints: readonly string[],
  options: HttpModuleOptions,
): Promise<Array<{ definition: ModuleDefinition; origin: string }>> {
  if (endpoints.length === 0) return [];
  const client = { timeoutMs: options.timeoutMs, fetch: options.fetch ?? globalThis.fetch };
  return Promise.all(
    endpoints.map(async (given) => {
      const endpoint = normalisedEndpoint(given);
      const { hasObserve, claimKeyFields, ...described } = await fetchDescription(endpoint, client);
      const definition = defineModule({
        ...described,
        // Only the remote knows what names its object; without claim_key its resources hold no claim.
        ...(claimKeyFields && {
          claimKey: ({ configs }) => claimKeyOf(claimKeyFields, configs),
        }),
        plan: createPlan(endpoint, client),
        sync: (input, ctx) => postSync(endpoint, input, ctx, client),
        // A kind without it stays without observe, so an import of it is refused (400 naming the kind).
        ...(hasObserve && {
          observe: (input, ctx) => postObserve(endpoint, input, ctx, client),
        }),
      });
      return { definition, origin: endpoint };
    }),
  );
}

/** An http(s) base URL without a trailing slash, query or fragment. */
function normalisedEndpoint(given: string): string {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new Error(
      `http module ${given}: not a URL (STEWARD_HTTP_MODULES takes base URLs such as http://127.0.0.1:9000)`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`http module ${given}: only http and https URLs are supported`);
  if (url.search || url.hash)
    throw new Error(`http module ${given}: the base URL must not have a query or fragment`);
  return url.href.replace(/\/+$/, '');
}
