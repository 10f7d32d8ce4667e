import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

import { readJsonFile, writeJsonAtomic } from './run-dir.js';

/**
 * `owner.json` in a resource's run directory: which resource made it, written before anything is
 * started there. `owner` is a token of one incarnation of the resource: its `created_at` (a resource
 * orphaned and then created again under the same URN is a new row, created later), or, once it
 * imported the directory, the token of the marker it found, kept in `state.data.owner`. So a create
 * retried after a crash, or retried as a new operation after an ERROR, finds its own marker and
 * carries on, while the directory an orphaned resource left behind is not taken over.
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
  created_at: string;
  state: { data: unknown; output: object };
}

/** The token a marker of this resource holds: the one it imported, or its creation time. */
export function ownerToken(resource: OwnedResource): string {
  const kept = (resource.state.data as { owner?: unknown } | null)?.owner;
  return typeof kept === 'string' ? kept : resource.created_at;
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
