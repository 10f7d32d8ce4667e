/**
 * Idempotency keys (docs/api.md "Idempotency keys"): the first answer to a keyed write, per
 * caller (`scope`) and key. A record older than the window is as good as absent: the reads skip
 * it, a new record of its key replaces it, and the pruner deletes it.
 */
export interface IdempotencyBook {
  /** The live record of `key` in `scope`: created at or after `liveFromMs`. */
  findIdempotencyRecord(
    scope: string,
    key: string,
    liveFromMs: number,
  ): Promise<IdempotencyRecord | undefined>;
  /** Stores a record on its own (an answer no accept transaction carried); false when a live one holds the key. */
  saveIdempotencyRecord(write: IdempotencyWrite): Promise<boolean>;
  /** Deletes the records created before `beforeMs`, in short batches; returns how many. */
  pruneIdempotencyKeys(beforeMs: number): Promise<number>;
}

/** One stored answer: what a replay sends again. */
export interface IdempotencyRecord {
  scope: string;
  key: string;
  /** A hash of the method, path, query and body the key was first used with. */
  fingerprint: string;
  status: number;
  /** The answer's headers that a replay sends again (ETag, Location). */
  headers: Record<string, string>;
  body: unknown;
  createdAtMs: number;
}

export interface IdempotencyWrite {
  record: IdempotencyRecord;
  /** Records of the key created before this are expired: replaced, not a conflict. */
  liveFromMs: number;
}
