import type { Operation, OperationStatus, Resource, ResourceFilter, Revision } from '../model.js';
import type { ResourceItem } from '../resource-item.js';

/** Single documents, and the look-ups a request makes before it writes. */
export interface ResourceReads {
  findResource(urn: string): Promise<Resource | undefined>;
  findResources(urns: readonly string[]): Promise<Resource[]>;
  /** URNs of the resources whose `spec.dependencies` name `urn`. */
  findDependents(urn: string): Promise<string[]>;
  findOperation(id: string): Promise<Operation | undefined>;
  /** The resource holding `key` among resources of `kind` (the dry run's look; the commit checks again). */
  findClaimHolder(kind: string, key: string): Promise<ClaimHolder | undefined>;
}

/** The API's lists, each page bounded by count and by bytes (bounded-page.ts). */
export interface ResourcePages {
  /**
   * One resource as a listed item, its document always there (GET /resources/{urn} writes its
   * JSON from it, as a list page does): a view's read, never the sealing store's.
   */
  findResourceItem(urn: string): Promise<ResourceItem | undefined>;
  /** Ordered by URN; `after` is the last URN of the previous page. */
  listResources(filter: ResourceFilter, limit: number, after?: string): Promise<Resource[]>;
  /**
   * What listResources would return, as listed items (a list page writes them as they are), each
   * with its size (ResourceItem.size). With `inlineChars`, a row whose large columns are longer
   * comes without its document (`json` undefined): a page reads no more than that per row.
   */
  listResourceItems(
    filter: ResourceFilter,
    limit: number,
    after?: string,
    inlineChars?: number,
  ): Promise<ResourceItem[]>;
  /** Newest first; `before` is the last id of the previous page. */
  listOperations(filter: OperationFilter, limit: number, before?: string): Promise<Operation[]>;
  /** Newest first; `before` is the last revision id of the previous page. */
  listRevisions(urn: string, limit: number, before?: number): Promise<Revision[]>;
  /**
   * The sizes of what listOperations and listRevisions would return, in their order: the characters of the
   * row's large text columns, read without loading the rows (the page byte bound).
   */
  listOperationSizes(filter: OperationFilter, limit: number, before?: string): Promise<number[]>;
  listRevisionSizes(urn: string, limit: number, before?: number): Promise<number[]>;
}

/** What an operations listing selects; every given field must match. */
export interface OperationFilter {
  urn?: string;
  status?: OperationStatus;
  /** Only operations of resources in these projects (the caller's scope); undefined: every project. */
  projects?: readonly string[];
}

/** The resource that holds a claim key. */
export interface ClaimHolder {
  urn: string;
  project: string;
}
