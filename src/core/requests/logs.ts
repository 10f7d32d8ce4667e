import type { LogChunk } from '../../sdk/index.js';
import { InvalidRequestError, NotFoundError } from '../errors.js';
import type { Registry } from '../modules/registry.js';
import { parseUrn } from '../names.js';
import { secretStringsOf } from '../secrets/sealed-resources.js';
import type { SealedStore } from '../secrets/sealing-store.js';
import { scrubSecrets } from '../secrets/secrets.js';
import { toResolved } from './dependencies.js';

export interface LogRequest {
  follow: boolean;
  /** The last N lines before following; all when absent. */
  tail?: number;
  signal: AbortSignal;
}

/**
 * A resource's logs, for kinds whose module has `logs`. Any other kind is a 400
 * ("kind X has no logs"), never a 500.
 */
export function createLogReader({
  store,
  registry,
}: {
  store: Pick<SealedStore, 'findResource' | 'findResources'>;
  registry: Registry;
}) {
  return async function openLogs(
    urn: string,
    request: LogRequest,
  ): Promise<AsyncIterable<LogChunk>> {
    parseUrn(urn);
    // The module sees its secrets opened, as in sync; one that does not open is left out (logs are a read).
    const resource = await store.findResource(urn);
    if (!resource) throw new NotFoundError(`resource ${urn} does not exist`, { urn });
    const definition = registry.find(resource.kind)?.definition;
    if (!definition?.logs)
      throw new InvalidRequestError(`kind ${resource.kind} has no logs`, { kind: resource.kind });
    const found = new Map(
      (await store.findResources(Object.values(resource.spec.dependencies))).map((dep) => [
        dep.urn,
        dep,
      ]),
    );
    const dependencies = Object.fromEntries(
      Object.entries(resource.spec.dependencies).flatMap(([name, depUrn]) => {
        const dep = found.get(depUrn);
        return dep ? [[name, toResolved(dep)]] : [];
      }),
    );
    const chunks = definition.logs(
      { resource, dependencies },
      { signal: request.signal, follow: request.follow, tail: request.tail },
    );
    const schemasOf = (kind: string) => registry.find(kind)?.definition;
    return withoutSecrets(chunks, secretStringsOf(resource, dependencies, schemasOf));
  };
}

/**
 * A program prints what it was given, its secret env included, and a viewer reads
 * its logs: every secret of the resource and of its dependencies' outputs becomes
 * `[secret]`, as in last_error. (A line is scrubbed whole: a secret the module
 * splits across two chunks is not found.)
 */
async function* withoutSecrets(
  chunks: AsyncIterable<LogChunk>,
  secrets: readonly string[],
): AsyncIterable<LogChunk> {
  for await (const chunk of chunks)
    yield secrets.length === 0 ? chunk : { ...chunk, line: scrubSecrets(chunk.line, secrets) };
}

export type LogReader = ReturnType<typeof createLogReader>;
