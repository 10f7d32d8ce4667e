import { NotFoundError } from '../errors.js';
import {
  type Operation,
  type OperationStatus,
  type Resource,
  type ResourceFilter,
  type Revision,
} from '../model.js';
import type { Registry } from '../modules/registry.js';
import { parseUrn } from '../names.js';
import type { AcceptWrites, ResourcePages, ResourceReads } from '../ports.js';
import type { ResourceItem } from '../resource-item.js';
import { forCaller } from './allowed-actions.js';
import {
  boundedPage,
  DEFAULT_MAX_PAGE_BYTES,
  type EncodedPage,
  inlineRowChars,
  rowsToLoad,
} from './bounded-page.js';
import { decodePageToken, encodePageToken } from './page-token.js';
import { resourceJsonWriter } from './resource-json.js';
import {
  ALL_PROJECTS,
  assertResourceInScope,
  inScope,
  OutOfScopeError,
  type ProjectScope,
  projectsOf,
  resourceNotFound,
} from './scope.js';
import { operationView, resourceView } from './views.js';

export interface QueryDeps {
  /** The undecorated store: views redact what they read, sealed values included. */
  store: Pick<ResourceReads, 'findResource' | 'findOperation'> &
    ResourcePages &
    Pick<AcceptWrites, 'commitCancel'>;
  registry: Registry;
  /** STEWARD_MAX_PAGE_BYTES: a list page's JSON ends before the item that would take it past this. @default 4 MiB */
  maxPageBytes?: number;
}

/**
 * Reads for the API (redacted views); cancel is in operation-commands.ts. Each
 * takes the caller's project scope (default: every project): what lies outside it
 * is filtered out in the query, or answers exactly as a missing thing does.
 */
export function createQueries({
  store,
  registry,
  maxPageBytes = DEFAULT_MAX_PAGE_BYTES,
}: QueryDeps) {
  /** With `mayChange` (whether the caller may change resources of the URN's project), it carries `allowed_actions`. */
  async function getResource(
    urn: string,
    scope: ProjectScope = ALL_PROJECTS,
    mayChange?: boolean,
  ): Promise<Resource> {
    assertResourceInScope(scope, urn);
    const resource = await store.findResource(urn);
    if (!resource) throw resourceNotFound(urn, false);
    return viewFor(resource, mayChange);
  }

  /**
   * getResource's document as JSON text, written as a list page's items are (resource-json.ts:
   * the same characters as `JSON.stringify` of the view, from the document the database wrote),
   * with the version for the ETag.
   */
  async function getResourceJson(
    urn: string,
    scope: ProjectScope = ALL_PROJECTS,
    mayChange?: boolean,
  ): Promise<{ version: number; json: string }> {
    assertResourceInScope(scope, urn);
    const item = await store.findResourceItem(urn);
    if (!item) throw resourceNotFound(urn, false);
    return { version: item.version, json: resourceJsonWriter(registry, mayChange)(item) };
  }

  function viewFor(resource: Resource, mayChange: boolean | undefined): Resource {
    const view = resourceView(resource, registry);
    return mayChange === undefined ? view : forCaller(view, registry, mayChange);
  }

  /**
   * Pages are bounded by count and by bytes, in one statement: each row comes with its size, and
   * with its document only when its large columns are small enough that the whole page stays
   * within the bound (bounded-page.ts inlineRowChars). When a row that fits the page came without
   * it, the rows that fit are read again, whole. Items are the documents the database wrote
   * (resource-json.ts); the page's `items` are the listed items.
   */
  async function listResources(
    filter: ResourceFilter,
    pageSize: number,
    pageToken?: string,
    scope: ProjectScope = ALL_PROJECTS,
    mayChange?: boolean,
  ): Promise<EncodedPage<ResourceItem>> {
    // A kind no module has is a typo (400 naming the kinds), as a bad status is, not an empty list.
    if (filter.kind !== undefined) registry.get(filter.kind);
    const after = decodePageToken<string>('resources', pageToken, 'string');
    const scoped = Object.assign({}, filter, { projects: projectsOf(scope) });
    const limit = pageSize + 1;
    const listed = await store.listResourceItems(
      scoped,
      limit,
      after,
      inlineRowChars(limit, maxPageBytes),
    );
    const count = rowsToLoad(
      listed.map((row) => (row.json === undefined ? row.size : { whole: row.size })),
      pageSize,
      maxPageBytes,
    );
    let rows = listed.slice(0, count);
    if (rows.some((row) => row.json === undefined))
      rows = await store.listResourceItems(scoped, count, after);
    return boundedPage(
      rows,
      listed.length > count,
      maxPageBytes,
      (last) => encodePageToken('resources', last.urn),
      resourceJsonWriter(registry, mayChange),
    );
  }

  async function listRevisions(
    urn: string,
    pageSize: number,
    pageToken?: string,
    scope: ProjectScope = ALL_PROJECTS,
  ): Promise<EncodedPage<Revision>> {
    const { project } = parseUrn(urn);
    if (!inScope(scope, project))
      throw new OutOfScopeError(`resource ${urn} has no history`, { urn });
    const before = decodePageToken<number>(`revisions:${urn}`, pageToken, 'number');
    const sizes = await store.listRevisionSizes(urn, pageSize + 1, before);
    if (sizes.length === 0 && before === undefined && !(await store.findResource(urn)))
      throw new NotFoundError(`resource ${urn} has no history`, { urn });
    const count = rowsToLoad(sizes, pageSize, maxPageBytes);
    const rows = sizes.length === 0 ? [] : await store.listRevisions(urn, count, before);
    return boundedPage(rows, sizes.length > count, maxPageBytes, (last) =>
      encodePageToken(`revisions:${urn}`, last.id),
    );
  }

  /** The operation as stored, when it exists and lies in scope; else the one not-found of both. */
  async function findVisibleOperation(id: string, scope: ProjectScope): Promise<Operation> {
    const operation = await store.findOperation(id);
    if (!operation) throw new NotFoundError(`operation ${id} does not exist`, { id });
    if (!inScope(scope, parseUrn(operation.urn).project))
      throw new OutOfScopeError(`operation ${id} does not exist`, { id });
    return operation;
  }

  async function getOperation(id: string, scope: ProjectScope = ALL_PROJECTS): Promise<Operation> {
    return operationView(await findVisibleOperation(id, scope), registry);
  }

  async function listOperations(
    filter: { urn?: string; status?: OperationStatus },
    pageSize: number,
    pageToken?: string,
    scope: ProjectScope = ALL_PROJECTS,
  ): Promise<EncodedPage<Operation>> {
    if (filter.urn !== undefined) parseUrn(filter.urn);
    const before = decodePageToken<string>('operations', pageToken, 'string');
    const scoped = Object.assign({}, filter, { projects: projectsOf(scope) });
    const sizes = await store.listOperationSizes(scoped, pageSize + 1, before);
    const count = rowsToLoad(sizes, pageSize, maxPageBytes);
    const rows = await store.listOperations(scoped, count, before);
    return boundedPage(
      rows.map((row) => operationView(row, registry)),
      sizes.length > count,
      maxPageBytes,
      (last) => encodePageToken('operations', last.id),
    );
  }

  return {
    getResource,
    getResourceJson,
    listResources,
    listRevisions,
    getOperation,
    listOperations,
  };
}

export type Queries = ReturnType<typeof createQueries>;
