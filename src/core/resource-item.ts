import type { ResourceStatus } from './model.js';

/**
 * A listed resource as the API writes it (core/requests/resource-json.ts): its document as JSON
 * text, written by the database (store/resource-document.ts), with the fields that decide how
 * one caller sees it.
 */
export interface ResourceItem {
  urn: string;
  kind: string;
  version: number;
  status: ResourceStatus;
  paused: boolean;
  /** spec.policy as its stored JSON text. */
  policy: string;
  /**
   * The page byte bound's estimate of the row: its document's length when the document came (all
   * of the row), else the characters of its large text columns (to which the bound adds an estimate
   * of the rest, bounded-page.ts rowsToLoad).
   */
  size: number;
  /** `JSON.stringify` of the resource as stored; undefined when the listing left it out (the row was larger than it asked for). */
  json: string | undefined;
}
