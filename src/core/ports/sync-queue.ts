import type { Drift, EventInput, OperationStatus, Resource, ResourceStatus } from '../model.js';
import type { ProjectShares } from '../sync/claim-policy.js';

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
