import type { EventInput, Operation, Resource, ResourceStatus, Revision } from '../model.js';
import type { Schedule } from '../schedules/schedule.js';
import type { IdempotencyWrite } from './idempotency-book.js';
import type { Footprint, QuotaLimits, QuotaRefusal } from './quotas.js';
import type { ClaimHolder } from './resource-reads.js';
import type { ScheduleRun } from './schedule-book.js';

/** The writes of accepted requests. */
export interface AcceptWrites {
  /**
   * Writes an accepted request (create, update, action, delete, retry) in one transaction.
   * A claim key another resource holds writes nothing and answers who holds it. With
   * `change.quota`, the resource's footprint is counted in the same transaction and the
   * write is rolled back, answering the refusal, when it would take a quota past its max.
   * A committed change makes work due: the store signals it (StoreSignals).
   */
  commitAccepted(change: AcceptedChange): Promise<AcceptOutcome>;
  /**
   * Writes schedule firings' changes of different resources in ONE transaction (the scheduler's
   * batched firing, docs/design.md §10): each change a plain action on a stored resource (no
   * revision, quota, claim key, superseded operation, reindex, idempotency or removal) carrying
   * its `scheduleRun`. Each resource's compare-and-set as `commitAccepted`'s: a change whose row
   * moved since it was read is left out ('conflict': nothing of it written, its run neither);
   * the others' operations in one insert, every event (each change's, then its run's) in one
   * append, each run fenced by its lease token. A run whose lease was taken over rolls the whole
   * batch back: 'lease_lost', nothing written. Else one outcome per change, in the order given.
   */
  commitAcceptedBatch(changes: readonly AcceptedChange[]): Promise<BatchOutcome>;
  /** Cancels an operation and puts its resource in ERROR, in one transaction. */
  commitCancel(cancel: CancelChange): Promise<CommitOutcome>;
  /**
   * Pauses or resumes a resource in one transaction: `paused` is set only while it is still
   * `!change.paused` (the compare-and-set; 'conflict' otherwise), with `updated_at/by`, the
   * finished operation, the revision and the events. Nothing else of the row changes. A resume
   * makes a PENDING row due at once, and the store signals it (StoreSignals).
   */
  commitPause(change: PauseChange): Promise<CommitOutcome>;
}

export interface AcceptedChange {
  /** The full new document, secrets included (sealed when STEWARD_SECRET_KEY is set). */
  resource: Resource;
  /** null for a create: the URN must be free. */
  expected: ExpectedState | null;
  /**
   * The stored document the change was planned from, as core read it (absent for a create).
   * The store ignores it; sealingStore puts back the secrets of it that did not open.
   */
  current?: Resource;
  /** The resource's next due time (epoch ms). */
  nextSyncAtMs: number;
  operation: Operation;
  /** An operation cancelled as superseded, when a delete replaces it. */
  superseded?: { id: string; error: string };
  revision?: RevisionInput;
  /** Rewrite label and dependency index rows (create, or they changed). */
  reindex: boolean;
  /**
   * The module's claim key for the new spec (`claimKey`), null when it names none;
   * absent (a delete, a retry) keeps the stored one. Unique within the kind.
   */
  claimKey?: string | null;
  events: EventInput[];
  /**
   * The resource's footprint after this change, and the quotas it must fit in. Absent when the
   * change keeps the stored footprint (delete, retry). Only growth is refused: a change that
   * adds nothing to a quota passes even when the quota is already over (it was lowered).
   */
  quota?: { footprint: Footprint; limits: QuotaLimits };
  /** Newest revisions kept for this resource when `revision` is added; 0 keeps all. */
  keepRevisions?: number;
  /** Schedules made with a create (its `expires_at`), inserted after the resource row. */
  schedules?: Array<{ schedule: Schedule; nextRunAtMs: number }>;
  /**
   * A schedule's firing that made this change: its run is recorded in the same transaction, under
   * the lease token of its claim, so the operation and the run are written together or not at all.
   */
  scheduleRun?: ScheduleRun;
  /**
   * A keyed request's answer (Idempotency-Key): stored in the same transaction, so the operation and
   * the key are written together or not at all; a live record of the key rolls the change back.
   */
  idempotency?: IdempotencyWrite;
}

/** What the resource must still look like for a write to apply. */
export interface ExpectedState {
  version: number;
  status: ResourceStatus;
  operationId: string;
}

/** A revision as an accepted change writes it: the store assigns `id`, and `urn` is the resource's. */
export type RevisionInput = Omit<Revision, 'id' | 'urn'>;

export interface CancelChange {
  urn: string;
  expected: ExpectedState;
  operationId: string;
  error: string;
  nowIso: string;
  events: EventInput[];
}

export interface PauseChange {
  urn: string;
  /** The value written: true pauses, false resumes. */
  paused: boolean;
  /** The audit record, already succeeded; the resource's `operation_id` stays the one it had. */
  operation: Operation;
  revision: RevisionInput;
  events: EventInput[];
}

export type CommitOutcome = 'committed' | 'conflict';

/** `commitAcceptedBatch`'s answer: each change's, in order, or the whole batch's lost lease. */
export type BatchOutcome = ReadonlyArray<'committed' | 'conflict'> | 'lease_lost';

/**
 * What `commitAccepted` answers. `claimHeldBy`: the change's claim key is held by another
 * resource; a `QuotaRefusal`: the change would take a quota past its max. Either way nothing
 * was written.
 */
export type AcceptOutcome =
  | CommitOutcome
  | { claimHeldBy: ClaimHolder }
  | QuotaRefusal
  /** The change carried a schedule run whose lease another scheduler holds now: nothing was written. */
  | 'lease_lost'
  /** The change carried an idempotency record whose key a live record holds already: nothing was written. */
  | 'idempotency_key_taken';
