import type { Operation, Resource, ResourcePolicy } from '../model.js';
import type { RegisteredModule } from '../modules/registry.js';
import type { AcceptedChange, IdempotencyWrite, ScheduleRun } from '../ports.js';
import type { Schedule } from '../schedules/schedule.js';
import type { SpecChange } from './spec-changes.js';

/* The requests the commands take (resource-commands.ts) and what they answer. */

export interface CreateRequest {
  kind: string;
  project: string;
  name: string;
  labels?: Record<string, string>;
  configs?: Record<string, unknown>;
  dependencies?: Record<string, string>;
  /** Adopt the backend object that exists (action `import`); observe mode implies it. */
  import?: boolean;
  /** `spec.policy`, partial: the rest from DEFAULT_POLICY. */
  policy?: Partial<ResourcePolicy>;
  /** A date-time: the resource is deleted then (a delete schedule made with it, docs/design.md §10). */
  expiresAt?: string;
}

export interface UpdateRequest {
  labels?: Record<string, string>;
  configs?: Record<string, unknown>;
  dependencies?: Record<string, string>;
  /** Replaces the stored `spec.policy` (partial: the rest from DEFAULT_POLICY). */
  policy?: Partial<ResourcePolicy>;
}

export interface RequestOptions {
  actor: string;
  dryRun?: boolean;
  /** The version the caller last saw (If-Match); undefined or '*' matches any. */
  ifMatch?: number | '*';
  /**
   * A schedule firing (scheduler.ts): the run to record for the operation this request makes, in
   * the operation's own transaction, so a scheduler that dies or loses its lease cannot fire twice.
   */
  firing?: (operationId: string) => ScheduleRun;
  /**
   * An Idempotency-Key request (idempotency-keys.ts): its answer, built from what this request
   * accepted, is stored in the operation's own transaction, so a crash between the commit and the
   * answer cannot make a retry run it twice.
   */
  idempotency?: (accepted: Accepted) => IdempotencyWrite;
}

/** What an accepted request answers: redacted views. `operation` is unsaved on a dry run. */
export interface Accepted {
  resource: Resource;
  operation: Operation;
  dryRun: boolean;
  /** A dry run's review: the fields that would change, and the steps the plan left for sync. */
  review?: { changes: SpecChange[]; steps?: string[] };
  /** `options.firing`'s run was committed with the operation (false: nothing new was written). */
  firingRecorded?: boolean;
  /** Schedules made with the request (a create's `expires_at`); unsaved on a dry run. */
  schedules?: Schedule[];
  /** `options.idempotency`'s answer was committed with the operation. */
  idempotencyRecorded?: boolean;
}

/** What a request's plan gives: a change to commit, or an answer that needs none (a delete already under way). */
export type Planned = { change: AcceptedChange } | { answer: Accepted };

/** Plans a request from the resource as read; throws the request's refusal. */
export type Attempt = (current: Resource, module: RegisteredModule) => Promise<Planned>;
