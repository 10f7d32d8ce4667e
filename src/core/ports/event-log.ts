import type { EventRecord } from '../model.js';

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

/** What a watch selects; every given field must match. */
export interface EventFilter {
  project?: string;
  kind?: string;
  urn?: string;
  /** Only these projects (the caller's scope); undefined: every project. */
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

/** What one prune of deleted resources' history removed. */
export interface DeletedHistoryPruned {
  urns: number;
  revisions: number;
  operations: number;
}
