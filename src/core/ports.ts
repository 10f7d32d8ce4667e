import type { AuditEntry, AuditRecord } from './audit/audit-entry.js';
import type {
  Drift,
  EventInput,
  EventRecord,
  Operation,
  OperationStatus,
  Resource,
  ResourceFilter,
  ResourceStatus,
  Revision,
} from './model.js';
import type { ResourceItem } from './resource-item.js';
import type { ClaimedSchedule, Schedule, ScheduleOutcome } from './schedules/schedule.js';
import type { ProjectShares } from './sync/claim-policy.js';
import type { WebhookBook, WebhookQueue } from './webhooks/webhook.js';

/**
 * What core needs from storage, as one port per need: each consumer declares only
 * the ports it uses. `src/store` implements them all over kysely (`Store`); core
 * never sees SQL. Every method that writes is one transaction, and every status
 * write is a compare-and-set on the values core read (`expected`), never
 * read-then-write.
 */
export type Store = ResourceReads &
  ResourcePages &
  AcceptWrites &
  SyncQueue &
  EventLog &
  Retention &
  SecretRewrites &
  ScheduleBook &
  ScheduleQueue &
  WebhookBook &
  WebhookQueue &
  StoreGauges &
  StoreSignals &
  StoreHealth &
  IdempotencyBook &
  AuditTrail;

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

/** The sync engine's work queue: due resources claimed under a fenced lease (docs/design.md §6). */
export interface SyncQueue {
  /** Claims up to `limit` due resources for `owner`. */
  claimDue(claim: ClaimRequest): Promise<ClaimBatch>;
  /** Extends the leases still held; returns the URNs whose lease or operation was lost. */
  renewLeases(leases: readonly LeaseRef[], nowMs: number, leaseMs: number): Promise<string[]>;
  /** Writes sync outcomes in one transaction, each fenced by its own lease token. */
  saveSyncResults(results: readonly SyncWriteBack[], nowMs: number): Promise<boolean[]>;
  /** Makes COMPLETED resources of these kinds due for a drift re-sync when they have no due time (start-up). */
  scheduleResync(kinds: readonly string[], nowMs: number): Promise<number>;
  /** Gives leases back without counting an attempt (shutdown). */
  releaseLeases(leases: readonly LeaseRef[], nowMs: number): Promise<void>;
}

/** The audit log (core/audit/): appended in batches, listed by admins, pruned past its retention. */
export interface AuditTrail {
  /** Appends the entries in one statement, in order (ids grow in the order given). */
  appendAudit(entries: readonly AuditEntry[]): Promise<void>;
  /** Newest first; `before` is the last id of the previous page. */
  listAudit(filter: AuditFilter, limit: number, before?: number): Promise<AuditRecord[]>;
  /** Deletes entries older than `beforeMs` (epoch ms), in short batches; returns how many. */
  pruneAudit(beforeMs: number): Promise<number>;
}

/** What an audit listing selects; every given field must match. */
export interface AuditFilter {
  project?: string;
  actor?: string;
  method?: string;
  action?: string;
  /** Epoch ms, inclusive. */
  sinceMs?: number;
  /** Epoch ms, exclusive. */
  untilMs?: number;
  /** Only these projects (the caller's scope; entries with no project are left out); undefined: every entry. */
  projects?: readonly string[];
}

/** The API's schedules (core/schedules/schedule-commands.ts): made, read and deleted by callers. */
export interface ScheduleBook {
  /** Stores a new schedule, due at `nextRunAtMs`; false (nothing written) when its resource is gone. */
  insertSchedule(schedule: Schedule, nextRunAtMs: number): Promise<boolean>;
  findSchedule(id: string): Promise<Schedule | undefined>;
  /** Ordered by id; `after` is the last id of the previous page. */
  listSchedules(filter: ScheduleFilter, limit: number, after?: string): Promise<Schedule[]>;
  /** Deletes a schedule; false when there was none. A resource's delete removes its schedules itself. */
  deleteSchedule(id: string): Promise<boolean>;
}

/** The scheduler's work queue (core/schedules/scheduler.ts): due schedules claimed under a fenced lease, as syncs are. */
export interface ScheduleQueue {
  /** Claims up to `limit` schedules due at `nowMs` that no live lease holds, each with a new lease token. */
  claimDueSchedules(
    owner: string,
    limit: number,
    nowMs: number,
    leaseMs: number,
  ): Promise<ClaimedSchedule[]>;
  /**
   * Records a run and gives the lease back, with its events, in one transaction; applies only while
   * `leaseToken` is still the schedule's (false: another scheduler took it over, nothing written).
   */
  saveScheduleRun(run: ScheduleRun): Promise<boolean>;
  /** Gives the lease back and keeps the schedule due, to be claimed again from `retryAtMs` (a PENDING resource). */
  holdSchedule(id: string, leaseToken: number, retryAtMs: number): Promise<boolean>;
  /**
   * The earliest `next_run_at` (epoch ms) of a schedule a claim at `nowMs` could take (no lease,
   * or a lapsed one), from the due index; undefined when there is none. A schedule held for its
   * PENDING resource, or claimed now, is left out until its lease ends.
   */
  findNextScheduleDue(nowMs: number): Promise<number | undefined>;
}

/** The append-only event log, read by watches. */
export interface EventLog {
  /**
   * Events with `id > afterId` that match `filter`, oldest first, at most `limit`.
   * Ids are in commit order, so `readTo` (the last id the read covered, matching or
   * not) is where the next read resumes without skipping or repeating an event.
   */
  listEvents(filter: EventFilter, afterId: number, limit: number): Promise<EventBatch>;
  /** The oldest and newest retained event ids (of these projects' events only, when given); undefined while there are none. */
  findEventIdRange(projects?: readonly string[]): Promise<EventIdRange | undefined>;
}

/** Deletes what is past its retention (the pruners). */
export interface Retention {
  /** Deletes events whose id is more than `keep` below the newest, in short batches; returns how many. */
  pruneEvents(keep: number): Promise<number>;
  /**
   * Keeps the revisions and operations of the `keep` latest deleted URNs (those with no resource row, ordered by
   * their newest operation) and deletes the rest, in short batches. A URN that exists keeps its whole history.
   */
  pruneDeletedHistory(keep: number): Promise<DeletedHistoryPruned>;
}

/** `steward secrets rotate`: re-sealed values written over the stored ones. */
export interface SecretRewrites {
  /**
   * Replaces the configs and output of each resource whose stored configs and output
   * still equal `before` (as JSON), in one transaction; nothing else changes (no
   * version, status, lease, revision or event). Returns which were replaced.
   */
  replaceConfigsAndOutput(changes: readonly ValuesRewrite[]): Promise<boolean[]>;
}

/** The metrics gauges. */
export interface StoreGauges {
  /** Resources per kind and status. */
  countResourcesByKindAndStatus(): Promise<
    Array<{ kind: string; status: ResourceStatus; count: number }>
  >;
  /** Resources due at `nowMs` that no worker holds (the work queue's depth). */
  countDueResources(nowMs: number): Promise<number>;
}

/**
 * The one wake-up mechanism: the store knows which of its commits make work due or
 * append events, and says so. Each returns how to stop listening. Polling stays the
 * backstop for whatever a signal misses.
 */
export interface StoreSignals {
  /**
   * Calls `listener` when work may be due: after this process commits an accepted request,
   * and (PostgreSQL) when another process announces work with NOTIFY, which this store
   * LISTENs for from the first call on until it is closed. `announced` is false when the
   * store only saw another process commit something (SQLite): that may be work, and says
   * nothing of whether this process's database trouble is over.
   */
  onWorkDue(listener: (announced: boolean) => void): () => void;
  /** Calls `listener` after this process (or, on SQLite, another one) commits a write that may have appended events. */
  onEventsCommitted(listener: () => void): () => void;
  /**
   * Calls `listener` after each of this process's own commits that makes work due or may have
   * appended events, and for nothing else; it starts no LISTEN and no watch. What a process tells
   * the worker process it started (`serve`'s worker, src/worker-process/).
   */
  onOwnCommit(listener: (commit: CommitSignal) => void): () => void;
  /** Another process told this one of its commit (the worker process and `serve`): wakes the listeners as an own commit does. */
  relayCommit(commit: CommitSignal): void;
}

/** What a commit may have done: made work due, appended events, or both. */
export interface CommitSignal {
  work: boolean;
  events: boolean;
}

export interface StoreHealth {
  /** Cheap round trip for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** What one prune of deleted resources' history removed. */
export interface DeletedHistoryPruned {
  urns: number;
  revisions: number;
  operations: number;
}

export type CommitOutcome = 'committed' | 'conflict';
/**
 * `claimHeldBy`: the change's claim key is held by another resource; a `QuotaRefusal`: the
 * change would take a quota past its max. Either way nothing was written.
 */
/** `commitAcceptedBatch`'s answer: each change's, in order, or the whole batch's lost lease. */
export type BatchOutcome = ReadonlyArray<'committed' | 'conflict'> | 'lease_lost';

export type AcceptOutcome =
  | CommitOutcome
  | { claimHeldBy: ClaimHolder }
  | QuotaRefusal
  /** The change carried a schedule run whose lease another scheduler holds now: nothing was written. */
  | 'lease_lost'
  /** The change carried an idempotency record whose key a live record holds already: nothing was written. */
  | 'idempotency_key_taken';

/** The resource that holds a claim key. */
export interface ClaimHolder {
  urn: string;
  project: string;
}

/** What a resource counts against the quotas (quotas.ts says what each means). */
export interface Footprint {
  specBytes: number;
  processes: number;
}

export type QuotaName = 'resources' | 'bytes' | 'processes';

/** Each quota's max; 0 is no quota. */
export type QuotaMaxes = Readonly<Record<QuotaName, number>>;

export interface QuotaLimits {
  project: QuotaMaxes;
  global: QuotaMaxes;
}

/** The first quota a change would go past: nothing was written. */
export interface QuotaRefusal {
  refused: {
    quota: QuotaName;
    scope: 'project' | 'global';
    max: number;
    /** What was counted before this change. */
    used: number;
    /** What this change adds. */
    requested: number;
  };
}

/** What the resource must still look like for a write to apply. */
export interface ExpectedState {
  version: number;
  status: ResourceStatus;
  operationId: string;
}

/** A revision as an accepted change writes it: the store assigns `id`, and `urn` is the resource's. */
export type RevisionInput = Omit<Revision, 'id' | 'urn'>;

export interface ValuesRewrite {
  urn: string;
  before: { configs: Record<string, unknown>; output: Record<string, unknown> };
  after: { configs: Record<string, unknown>; output: Record<string, unknown> };
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

export interface ClaimRequest {
  owner: string;
  limit: number;
  nowMs: number;
  leaseMs: number;
  /**
   * Each project's share of this worker's slots (claim-policy.ts); absent: the oldest due rows, whatever their
   * project (the fast claim: on PostgreSQL a smaller statement, planned in half the time).
   */
  shares?: ProjectShares;
}

export interface ClaimBatch {
  work: ClaimedWork[];
  /**
   * The claim looked at every project with scheduled work (a row due, leased, or due later) and found
   * one: until new work is accepted or another process gives work back, only that project's rows can be
   * due, and the fast claim picks what a fair one would. False when it did not look (no project went over its share).
   */
  alone: boolean;
}

export interface ClaimedWork {
  resource: Resource;
  leaseToken: number;
  /** When the resource became due (epoch ms), before the claim moved it: the work queue's wait. */
  dueAtMs: number;
}

/** What a watch selects; every given field must match. */
export interface EventFilter {
  project?: string;
  kind?: string;
  urn?: string;
  /** Only these projects (the caller's scope); undefined: every project. */
  projects?: readonly string[];
}

/** What a schedules listing selects; every given field must match. */
export interface ScheduleFilter {
  urn?: string;
  project?: string;
  /** Only these projects (the caller's scope); undefined: every project. */
  projects?: readonly string[];
}

/** One firing of a schedule as the scheduler records it. */
export interface ScheduleRun {
  id: string;
  leaseToken: number;
  nowIso: string;
  outcome: ScheduleOutcome;
  operationId: string | null;
  error: string | null;
  /** The next due time (epoch ms); null: nothing more to fire. */
  nextRunAtMs: number | null;
  events: EventInput[];
}

/** What an operations listing selects; every given field must match. */
export interface OperationFilter {
  urn?: string;
  status?: OperationStatus;
  /** Only operations of resources in these projects (the caller's scope); undefined: every project. */
  projects?: readonly string[];
}

export interface EventBatch {
  events: EventRecord[];
  /** The highest event id this read covered; read on from here. */
  readTo: number;
}

export interface EventIdRange {
  oldestId: number;
  newestId: number;
}

export interface LeaseRef {
  urn: string;
  leaseToken: number;
  operationId: string;
  /** The status the row had when claimed: PENDING, or COMPLETED for a drift re-sync. Writes apply only while it still has it. */
  claimedStatus: 'PENDING' | 'COMPLETED';
}

/**
 * One sync outcome to write back. Applies only while the lease token and the
 * operation are still the ones the worker claimed.
 */
export interface SyncWriteBack extends LeaseRef {
  /**
   * `deleted` and `orphaned` remove the resource (an orphan without a module call); `resync` is a
   * drift re-sync of a COMPLETED resource; `imported` and `refreshed` complete an import and a
   * refresh (or an observe-mode sync); the rest update its state.
   */
  outcome:
    | 'step'
    | 'completed'
    | 'failed'
    | 'retry'
    | 'waiting'
    | 'deleted'
    | 'orphaned'
    | 'resync'
    | 'imported'
    | 'refreshed';
  status: ResourceStatus;
  output?: Record<string, unknown>;
  /** Present when the module returned `data` (null is a value). */
  data?: { value: unknown };
  /** Present when `state.drift` is written (null is a value). */
  drift?: { value: Drift | null };
  /** An import's configs with what observe read filled in (the sealing store seals them); absent: unchanged. */
  configs?: Record<string, unknown>;
  /**
   * With `configs`: how many bytes the filled-in configs add to the row's quota footprint
   * (`spec_bytes`, secrets counted in clear as at accept); the store adds it to the row and to its
   * project's count, so an import's filled-in content is counted against STEWARD_QUOTA_*_BYTES.
   */
  specBytesAdded?: number;
  observedVersion?: number;
  attempts: number;
  lastError: string | null;
  nextSyncAtMs: number | null;
  waitingOn: string[] | null;
  /** Set when the operation ends with this write. */
  operation?: { status: OperationStatus; error: string | null };
  /** Count this write as one sync call of the operation. */
  countsAttempt: boolean;
  /** Wake resources that wait on this one. */
  wakeDependents: boolean;
  events: EventInput[];
}

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
