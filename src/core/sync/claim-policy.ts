/*
 * What a worker claims: how many due resources (the claim window) and which (fair shares
 * across projects). Pure; the store's claim statements and the sync engine both use it.
 */

/**
 * Fair claims across projects. A worker's slots are shared: one project may hold at most
 * `cap` of them (its share of the concurrency, at least one) while another project has
 * work due, so a project whose backend hangs cannot hold every slot while others wait.
 * A project alone still uses every slot: rows over a project's share are claimed when
 * nothing else is due (the claim is work-conserving).
 *
 * Each worker counts only its own slots: with N workers a project may hold up to N × cap.
 */
export interface ProjectShares {
  /** Slots one project may hold in this worker while others have work due. */
  cap: number;
  /** Syncs running or waiting for a slot in this worker, per project (absent: none). */
  held: Readonly<Record<string, number>>;
  /**
   * How many of the claim's rows may not be rows over a share. A write-back in flight that makes
   * a project within its share due again at once (its next step) keeps a free slot for it: without
   * that, the slot its sync just freed would go to a project over its share before the write-back
   * commits. @default 0
   */
  reserved?: number;
}

/** A due row as the claim sees it. */
export interface DueRow {
  urn: string;
  project: string;
  dueAtMs: number;
}

/** `share × concurrency` slots, at least one and at most all of them. */
export function projectSlotCap(concurrency: number, share: number): number {
  return Math.min(concurrency, Math.max(1, Math.floor(share * concurrency)));
}

/** How many more rows `project` may be claimed within its share. */
export function allowance(shares: ProjectShares, project: string): number {
  return Math.max(0, shares.cap - (shares.held[project] ?? 0));
}

/**
 * True when claiming the `head` (the oldest `limit` due rows) would give a project more
 * than its share while other projects might have work due further back, or while slots are
 * reserved: the claim must then pick. A head shorter than `limit` is all the due work there is.
 */
export function headOverShare(
  head: readonly DueRow[],
  shares: ProjectShares,
  limit: number,
): boolean {
  if (head.length < limit && !shares.reserved) return false;
  const counts = new Map<string, number>();
  for (const row of head) counts.set(row.project, (counts.get(row.project) ?? 0) + 1);
  for (const [project, count] of counts) if (count > allowance(shares, project)) return true;
  return false;
}

/**
 * False when no claim of `limit` rows can give a project more than its share (every project's
 * allowance is at least `limit`, and no slot is reserved): the oldest rows are then the fair pick,
 * and the claim need not be the fair one.
 */
export function shareMayBind(shares: ProjectShares, limit: number): boolean {
  return (
    (shares.reserved ?? 0) > 0 || limit > shares.cap - Math.max(0, ...Object.values(shares.held))
  );
}

/**
 * How long the fast claim stands in for the fair one after a fair claim found one project
 * alone with scheduled work (ClaimBatch.alone). Work of another project that arrives meanwhile
 * announces itself (a wake-up from an accepted request, or on PostgreSQL from any process) and
 * ends the period; work that does not, waits at most `recheckMs` more for its share.
 */
export function createAloneWindow(recheckMs: number) {
  let untilMs = -Infinity;
  let wakes = 0;
  return {
    /** Whether a claim at `nowMs` must be the fair one; `mark` goes to `claimed`. */
    check(nowMs: number): { fair: boolean; mark: number } {
      return { fair: nowMs >= untilMs, mark: wakes };
    },
    /** A fair claim made at `nowMs` found one project alone, or not. A wake-up since `mark` tells against it. */
    claimed(alone: boolean, nowMs: number, mark: number): void {
      untilMs = alone && mark === wakes ? nowMs + recheckMs : -Infinity;
    },
    /** New work was announced: the next claim is fair. */
    woken(): void {
      wakes += 1;
      untilMs = -Infinity;
    },
  };
}

/** The rows of `head` within their project's allowance (the head is all there is when it is shorter than the limit). */
export function withinShare(head: readonly DueRow[], shares: ProjectShares): DueRow[] {
  const counts = new Map<string, number>();
  return [...head].sort(byDue).filter((row) => {
    const n = (counts.get(row.project) ?? 0) + 1;
    counts.set(row.project, n);
    return n <= allowance(shares, row.project);
  });
}

/**
 * The rows to claim, at most `limit`: first the rows within each project's share
 * (`shared`: each project's oldest due rows, up to its allowance), taken round-robin
 * (every project's oldest, then every project's second, …; ties by due time); then, to
 * fill the free slots but the `reserved` ones, the oldest rows of the head whatever their project.
 */
export function pickFair(
  shared: readonly DueRow[],
  head: readonly DueRow[],
  limit: number,
  reserved = 0,
): DueRow[] {
  const byProject = new Map<string, DueRow[]>();
  for (const row of shared)
    byProject.set(row.project, [...(byProject.get(row.project) ?? []), row]);
  const ranked = [...byProject.values()].flatMap((rows) =>
    [...rows].sort(byDue).map((row, rank) => ({ row, rank })),
  );
  ranked.sort((a, b) => a.rank - b.rank || byDue(a.row, b.row));
  const picked = new Map<string, DueRow>();
  for (const { row } of ranked) if (picked.size < limit) picked.set(row.urn, row);
  for (const row of [...head].sort(byDue))
    if (picked.size < limit - reserved && !picked.has(row.urn)) picked.set(row.urn, row);
  return [...picked.values()];
}

/**
 * The order to start claimed work in: each project's rows within its share first (they run
 * first, at `priority` 1, ahead of rows over a share still waiting for a slot), then the rest.
 */
export function launchOrder<T>(
  items: readonly T[],
  projectOf: (item: T) => string,
  shares: ProjectShares,
): Array<{ item: T; priority: number }> {
  const taken = new Map<string, number>();
  const ordered = items.map((item) => {
    const project = projectOf(item);
    const n = (taken.get(project) ?? 0) + 1;
    taken.set(project, n);
    return { item, priority: n <= allowance(shares, project) ? 1 : 0 };
  });
  return [...ordered.filter((x) => x.priority === 1), ...ordered.filter((x) => x.priority === 0)];
}

function byDue(a: DueRow, b: DueRow): number {
  return a.dueAtMs - b.dueAtMs || (a.urn < b.urn ? -1 : a.urn > b.urn ? 1 : 0);
}

/**
 * The per-project count of a worker's syncs running or waiting for a slot, and of its
 * write-backs in flight that make their resource due again at once.
 */
export function createProjectSlots(cap: number) {
  const held = new Map<string, number>();
  const returning = new Map<string, number>();
  const add = (counts: Map<string, number>, project: string, by: number) => {
    const n = (counts.get(project) ?? 0) + by;
    if (n > 0) counts.set(project, n);
    else counts.delete(project);
  };
  return {
    take: (project: string) => add(held, project, 1),
    give: (project: string) => add(held, project, -1),
    /** A write-back that makes a resource of `project` due at once is in flight. */
    returning: (project: string) => add(returning, project, 1),
    returned: (project: string) => add(returning, project, -1),
    /** The shares for a claim of `limit` rows while `freeSlots` slots are free. */
    shares(limit = 0, freeSlots = 0): ProjectShares {
      const shares = { cap, held: Object.fromEntries(held) };
      let kept = 0;
      for (const [project, n] of returning) kept += Math.min(n, allowance(shares, project));
      // Rows over a share may then take only the free slots not kept, never a place in the queue ahead of those slots.
      return Object.assign({}, shares, {
        reserved: kept > 0 ? Math.max(0, limit - Math.max(0, freeSlots - kept)) : 0,
      });
    },
  };
}

/**
 * How many due resources a worker may hold claimed while they wait for a free slot.
 *
 * Claiming only as many as there are free slots costs a claim and a write-back round trip
 * per handful of syncs; with fast syncs the database, not the module, sets the pace. Claims
 * that wait for a slot batch those statements, but a resource waiting behind slow syncs is a
 * resource another worker could have started. So the wait is bounded in time, not count:
 * a worker holds as many waiting claims as its slots would start within `windowMs` at the
 * average sync duration it has seen (none while it has seen no sync, at most twelve per slot).
 * Twelve, not three: with syncs of a few microseconds each claim, sync and write-back waits a turn
 * of an event loop that HTTP requests share, and at three per slot (40 leases a cycle) the worker
 * fell behind creates accepted at 1,000/s (the API bench: 4,048 PENDING at the peak; at twelve, 95).
 * The time bound above still holds claims behind slow syncs to the window.
 */
export function createClaimWindow({
  concurrency,
  windowMs = 20,
}: {
  concurrency: number;
  windowMs?: number;
}) {
  let averageMs: number | undefined;
  return {
    /** One finished sync call's duration, in ms. */
    record(durationMs: number): void {
      averageMs = averageMs === undefined ? durationMs : averageMs * 0.8 + durationMs * 0.2;
    },
    /**
     * How many due resources to claim now, given the syncs running or waiting for a slot and
     * the leases held. A lease is held from the claim through the write-back, so those being
     * written back count against a second allowance, as large as the first: a whole window may
     * be written back while the next one is claimed. With an allowance of only `concurrency`,
     * the next claim waited for the last window's write-back, and on PostgreSQL (where the two
     * statements run on two connections, so in parallel on the server) a worker's claims and
     * write-backs took turns: 13–17 % more reconciles/s with the larger allowance
     * (docs/decisions.md, "A claim overlaps the write-back before it").
     */
    claimable(syncingOrWaiting: number, held: number): number {
      const waiting =
        averageMs === undefined
          ? 0
          : Math.min(
              12 * concurrency,
              Math.floor((concurrency * windowMs) / Math.max(averageMs, 0.001)),
            );
      const window = concurrency + waiting;
      return Math.max(0, Math.min(window - syncingOrWaiting, 2 * window - held));
    },
  };
}
