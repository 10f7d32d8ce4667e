/**
 * One entry of the audit log (docs/design.md §13), as GET /audit answers it (snake_case,
 * like every document of the API): who asked for what, and how it was answered. Written for every write request (accepted or refused) and every refused
 * request of any method; never a token, a header or a body.
 */
export interface AuditEntry {
  /** When the answer's status was sent (ISO 8601, Steward's clock). */
  at: string;
  /** The token's name; `anonymous` in open mode; `unknown` when authentication refused the request. */
  actor: string;
  /** The project the request was about, when it names one. */
  project: string | null;
  method: string;
  /** The path without its query, at most PATH_MAX characters. */
  path: string;
  /** `resource.update`, `operation.cancel`, …, from the method and the path (`unknown` when none fits). */
  action: string;
  urn: string | null;
  /** The operation the request made or named, when there is one. */
  operation_id: string | null;
  status: number;
  /** `ok` below 400, `refused` for 4xx, `failed` for 5xx. */
  outcome: AuditOutcome;
  /** The error code of a refusal or failure. */
  code: string | null;
  request_id: string;
  /** A dry run: checked and answered, nothing written. */
  dry_run: boolean;
}

/** An entry as the API makes it; the recorder stamps `at` from Steward's clock. */
export type UntimedAuditEntry = Omit<AuditEntry, 'at'>;

export type AuditOutcome = 'ok' | 'refused' | 'failed';

/** A stored entry: its id orders the log (newest first in the listing). */
export interface AuditRecord extends AuditEntry {
  id: number;
}

/** The longest path an entry keeps: a path is the caller's text, and the table is not a place for megabytes of it. */
export const PATH_MAX = 512;

export function outcomeOf(status: number): AuditOutcome {
  return status < 400 ? 'ok' : status < 500 ? 'refused' : 'failed';
}
