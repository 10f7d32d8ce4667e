import { StewardError } from '../errors.js';
import type { IdempotencyBook, IdempotencyRecord, IdempotencyWrite } from '../ports.js';

/** How long a key's first answer is replayed (docs/api.md "Idempotency keys"): Stripe's 24 hours. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;

/** What a keyed request answered, as a replay sends it again. */
export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** A keyed request that runs: how to store its answer, and the end of its turn. */
export interface KeyTurn {
  /** The record of `answer`, to commit with the operation (RequestOptions.idempotency). */
  writeOf(answer: StoredAnswer): IdempotencyWrite;
  /** Stores `answer` on its own, for a write no accept transaction carried the key of. */
  save(answer: StoredAnswer): Promise<void>;
  /** The request is answered: the key may be used again (and replays from now on). */
  release(): void;
}

export type KeyLook = { replay: IdempotencyRecord } | { run: KeyTurn };

export class IdempotencyKeyReusedError extends StewardError {
  constructor() {
    super(
      'idempotency_key_reused',
      'this Idempotency-Key was used with another method, path or body in the last 24 hours; use a new key for a new request',
    );
  }
}

export class IdempotencyKeyInUseError extends StewardError {
  constructor() {
    super(
      'idempotency_key_in_use',
      'a request with this Idempotency-Key is still being answered; retry it once that one is done (it will replay the answer)',
    );
  }
}

export interface IdempotencyKeyDeps {
  store: IdempotencyBook;
  clock: () => Date;
  /** @default IDEMPOTENCY_WINDOW_MS */
  windowMs?: number;
}

/**
 * Idempotency keys (Stripe's, and the IETF draft's): per caller, the first answer to a keyed
 * write is replayed for `windowMs`; the same key for another request is refused. A key whose
 * request is still running in this process is refused with 409 (as Stripe does); two requests
 * racing in two processes both run up to their commit, where the stored key lets one win and
 * rolls the other back (409 too), so the work is done once either way.
 */
export function createIdempotencyKeys({
  store,
  clock,
  windowMs = IDEMPOTENCY_WINDOW_MS,
}: IdempotencyKeyDeps) {
  const running = new Set<string>();
  /** A record is live while younger than the window: made after `nowMs - windowMs`. */
  const liveFrom = (nowMs: number) => nowMs - windowMs + 1;

  /** What a request with `key` does: replay the stored answer, or run (the key is this request's until `release`). */
  async function look(scope: string, key: string, fingerprint: string): Promise<KeyLook> {
    const stored = await store.findIdempotencyRecord(scope, key, liveFrom(clock().getTime()));
    if (stored) {
      if (stored.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError();
      return { replay: stored };
    }
    const id = JSON.stringify([scope, key]);
    if (running.has(id)) throw new IdempotencyKeyInUseError();
    running.add(id);

    const writeOf = (answer: StoredAnswer): IdempotencyWrite => {
      const createdAtMs = clock().getTime();
      return {
        record: { scope, key, fingerprint, ...answer, createdAtMs },
        liveFromMs: liveFrom(createdAtMs),
      };
    };
    return {
      run: {
        writeOf,
        async save(answer) {
          await store.saveIdempotencyRecord(writeOf(answer));
        },
        release: () => running.delete(id),
      },
    };
  }

  /** Deletes the records past the window (the pruner's task); returns how many. */
  function pruneExpired(): Promise<number> {
    return store.pruneIdempotencyKeys(liveFrom(clock().getTime()));
  }

  return { look, pruneExpired };
}

export type IdempotencyKeys = ReturnType<typeof createIdempotencyKeys>;
