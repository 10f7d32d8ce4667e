import type { Resource } from './api-documents.js';
import { CliError, EXIT } from './cli-error.js';
import type { CliContext } from './context.js';
import { ApiError, segment } from './http-client.js';
import { type Manifest, readManifests } from './manifest-files.js';
import { orderByDependencies, outsideDependencies } from './manifest-order.js';

/**
 * The manifests of `-f`, in dependency order, once every dependency outside them is known to exist:
 * a cycle, or a dependency that is neither in the set nor stored, stops the command before anything
 * is sent that could change something (exit 2).
 */
export async function manifestsInOrder(ctx: CliContext, file: string): Promise<Manifest[]> {
  const manifests = orderByDependencies(await readManifests(file));
  const missing: string[] = [];
  for (const urn of outsideDependencies(manifests))
    if (!(await findResource(ctx, urn))) missing.push(urn);
  if (missing.length) {
    const users = (urn: string) =>
      manifests.filter((m) => m.dependsOn.includes(urn)).map((m) => m.where);
    throw new CliError(
      `nothing was applied: ${missing.map((urn) => `${urn} (a dependency of ${users(urn).join(', ')}) is neither in the documents nor in Steward`).join('; ')}`,
      EXIT.usage,
    );
  }
  return manifests;
}

/** GET /resources/{urn}, or null when there is none. */
export async function findResource(ctx: CliContext, urn: string): Promise<Resource | null> {
  try {
    return await ctx.client.request<Resource>('GET', `/resources/${segment(urn)}`);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

/** A failed PUT, named by the document it came from. */
export function documentError(manifest: Manifest, err: unknown, exitCode?: number): unknown {
  if (!(err instanceof ApiError)) return err;
  return new CliError(
    `${manifest.where} (${manifest.urn}): ${err.message}`,
    exitCode ?? err.exitCode,
  );
}
