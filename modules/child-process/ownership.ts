import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

import { readJsonFile, writeJsonAtomic } from './run-dir.js';

/**
 * `owner.json` in a resource's run directory: which resource made it, written before anything is
 * started there. `owner` is a token only that resource holds: the operation that first wrote the
 * marker (its create, or the first sync of a resource made before markers existed), kept in
 * `state.data.owner` from then on. An orphaned resource's directory keeps its old token, so a new
 * resource of the same name does not take it over; a create retried after a crash holds the same
 * operation, so it finds its own marker and carries on.
 */
export interface OwnerMarker {
  urn: string;
  owner: string;
}

export const OWNER_FILE = 'owner.json';

/** What a sync of this resource may do with its run directory. */
export type Ownership =
  /** Its marker: this resource made it. */
  | 'ours'
  /** Missing or empty: nothing there to take over. */
  | 'free'
  /** No marker, but this resource published its output from there before markers existed (or imported it). */
  | 'ours-unmarked'
  /** Someone else's: another resource's marker, or files nobody claims. */
  | 'foreign';

/** The resource fields ownership is decided on. */
export interface OwnedResource {
  urn: string;
  state: { operation_id: string; data: unknown; output: object };
}

/** The token a marker of this resource holds: the one it keeps, or (before its first write-back) its operation. */
export function ownerToken(resource: OwnedResource): string {
  const kept = (resource.state.data as { owner?: unknown } | null)?.owner;
  return typeof kept === 'string' ? kept : resource.state.operation_id;
}

export const readOwner = (dir: string) => readJsonFile<Partial<OwnerMarker>>(join(dir, OWNER_FILE));

export const writeOwner = (dir: string, resource: OwnedResource) =>
  writeJsonAtomic(join(dir, OWNER_FILE), {
    urn: resource.urn,
    owner: ownerToken(resource),
  } satisfies OwnerMarker);

/**
 * Whose the run directory is. Reads only. `published` says whether this resource's stored output
 * names the directory (a resource made by an earlier Steward, which wrote no marker, or one imported
 * from a directory without one).
 */
export async function ownershipOf(
  dir: string,
  resource: OwnedResource,
  published: boolean,
): Promise<Ownership> {
  const marker = await readOwner(dir);
  if (marker)
    return marker.urn === resource.urn && marker.owner === ownerToken(resource)
      ? 'ours'
      : 'foreign';
  const entries = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  // An empty directory is what a crash between mkdir and the marker's write leaves.
  if (entries.length === 0) return 'free';
  return published ? 'ours-unmarked' : 'foreign';
}

/** The message of a create (or any change) refused because the backend object is not this resource's. */
export function alreadyExists(what: string, dir: string): string {
  return `${what} already exists in ${dir} and was not made by this resource; import it with \`import: true\` (or remove it yourself to create a new one)`;
}
