import type { Kysely } from 'kysely';

import type { LeaseRef } from '../core/ports.js';
import type { Database } from './schema.js';

/**
 * The indexes of `items` in URN order. Every statement that locks several resource rows
 * (renewal, write-back, release) locks them in this order, so a heartbeat and a write-back
 * of the same leases, on two connections, cannot deadlock.
 */
export function urnOrder(items: ReadonlyArray<{ urn: string }>): number[] {
  return items
    .map((_, i) => i)
    .sort((a, b) => (items[a]!.urn < items[b]!.urn ? -1 : items[a]!.urn > items[b]!.urn ? 1 : 0));
}

type ResourceWhere = {
  where(column: 'urn' | 'lease_token', op: '=', value: string | number): ResourceWhere;
};

/** `query` held to the row of `lease`, while it still carries the lease's token. */
export function fenced<Q>(query: Q, lease: LeaseRef): Q {
  return (query as unknown as ResourceWhere)
    .where('urn', '=', lease.urn)
    .where('lease_token', '=', lease.leaseToken) as unknown as Q;
}

/** Gives a lease back; a row still due becomes due now (a superseding delete or a retry waits for nobody). */
export async function release(
  trx: Kysely<Database>,
  lease: LeaseRef,
  nowMs: number,
): Promise<void> {
  await fenced(
    trx.updateTable('resources').set((eb) => ({
      lease_owner: null,
      lease_expires_at: null,
      next_sync_at: eb.case().when('next_sync_at', 'is', null).then(null).else(nowMs).end(),
    })),
    lease,
  ).execute();
}
