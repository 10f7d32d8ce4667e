import type { BackoffOptions } from './backoff.js';

/** The sync engine's settings (src/worker-options.ts makes them from the configuration). */
export interface SyncEngineOptions {
  /** Identifies this worker's leases. */
  owner: string;
  /** Syncs running at once. @default 8 */
  concurrency: number;
  /** How long a claim holds a resource without a heartbeat. @default 15000 */
  leaseMs: number;
  /** The backstop poll when no wake-up arrives. @default 1000 */
  pollIntervalMs: number;
  /** A sync call that takes longer is aborted and counts as a failure. @default 60000 */
  syncTimeoutMs: number;
  /** Failures in a row before ERROR. @default 5 */
  maxAttempts: number;
  backoff: BackoffOptions;
  /** Re-check of a dependency that is not COMPLETED (completion also wakes waiters). @default 5000 */
  dependencyPollMs: number;
  /** How long in-flight syncs may finish on shutdown before they are aborted. @default 10000 */
  shutdownGraceMs: number;
  /** Largest output + data a sync may return, as UTF-8 bytes of JSON. @default 1048576 */
  maxStateBytes: number;
  /** The share of the slots one project may hold while another has work due (claim-policy.ts). @default 0.5 */
  projectSlotShare: number;
}
