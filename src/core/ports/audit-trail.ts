import type { AuditEntry, AuditRecord } from '../audit/audit-entry.js';

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
