import type { ClaimRequest, LeaseRef, SyncWriteBack } from '../core/ports.js';
import type { StoreDriver } from './driver.js';
import { fenced, release, urnOrder } from './lease-fence.js';

/**
 * The sync loop's statements: claim, renew, write back, release — all fenced by the lease
 * token. The claim and the write-back differ per database (StoreDriver.claimDue and
 * saveSyncResults); the rest is written once here.
 */
export function createSyncWrites(driver: StoreDriver) {
  async function renewLeases(
    leases: readonly LeaseRef[],
    nowMs: number,
    leaseMs: number,
  ): Promise<string[]> {
    if (leases.length === 0) return [];
    const until = nowMs + leaseMs;
    return driver.writeTransaction(async (trx) => {
      const lost: string[] = [];
      for (const lease of urnOrder(leases).map((i) => leases[i]!)) {
        const result = await fenced(
          trx.updateTable('resources').set({ lease_expires_at: until, next_sync_at: until }),
          lease,
        )
          .where('operation_id', '=', lease.operationId)
          .where('status', '=', lease.claimedStatus)
          // A row whose write-back committed meanwhile keeps its token but has no lease left to renew.
          .where('lease_expires_at', 'is not', null)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) lost.push(lease.urn);
      }
      return lost;
    });
  }

  async function scheduleResync(kinds: readonly string[], nowMs: number): Promise<number> {
    if (kinds.length === 0) return 0;
    const result = await driver.db
      .updateTable('resources')
      .set({ next_sync_at: nowMs })
      .where('kind', 'in', [...kinds])
      .where('status', '=', 'COMPLETED')
      .where('next_sync_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async function releaseLeases(leases: readonly LeaseRef[], nowMs: number): Promise<void> {
    if (leases.length === 0) return;
    await driver.writeTransaction(async (trx) => {
      for (const i of urnOrder(leases)) await release(trx, leases[i]!, nowMs);
      await driver.notifyWork(trx);
    });
  }

  return {
    claimDue: (request: ClaimRequest) => driver.claimDue(request),
    renewLeases,
    saveSyncResults: (results: readonly SyncWriteBack[], nowMs: number) =>
      driver.saveSyncResults(results, nowMs),
    scheduleResync,
    releaseLeases,
  };
}
