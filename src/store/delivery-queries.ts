import { type ExpressionBuilder, sql } from 'kysely';

import type {
  ClaimedDelivery,
  DeliveryOutcome,
  WebhookDelivery,
} from '../core/webhooks/webhook.js';
import type { StoreDriver } from './driver.js';
import type { Database } from './schema.js';
import { rowToDelivery, rowToWebhook } from './webhook-rows.js';

/** Finished deliveries deleted per transaction by the retention pruner. */
const PRUNE_BATCH = 500;

/**
 * Webhook deliveries (docs/webhooks.md): the delivery loop's queue, the API's list of them and
 * their retention. A claim is a compare-and-set on the lease columns under `for update skip
 * locked` (the schedule claim's shape), each with a new lease token that fences the outcome's write.
 */
export function createDeliveryQueries(driver: StoreDriver) {
  const { db } = driver;

  async function deliveriesWithAttempts(
    rows: ReadonlyArray<Parameters<typeof rowToDelivery>[0]>,
  ): Promise<WebhookDelivery[]> {
    if (rows.length === 0) return [];
    const attempts = await db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where(
        'delivery_id',
        'in',
        rows.map((row) => row.id),
      )
      .orderBy('delivery_id')
      .orderBy('attempt')
      .execute();
    return rows.map((row) =>
      rowToDelivery(
        row,
        attempts.filter((attempt) => attempt.delivery_id === row.id),
      ),
    );
  }

  async function findDelivery(id: string): Promise<WebhookDelivery | undefined> {
    const row = await db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row && (await deliveriesWithAttempts([row]))[0];
  }

  return {
    async pruneFinishedDeliveries(beforeIso: string): Promise<number> {
      let deleted = 0;
      for (;;) {
        // Batches of the oldest finished ones, on the partial index webhook_deliveries_finished.
        const count = await driver.writeTransaction(async (trx) => {
          const ids = (
            await trx
              .selectFrom('webhook_deliveries')
              .select('id')
              .where('finished_at', 'is not', null)
              .where('finished_at', '<', beforeIso)
              .where('state', '!=', 'pending')
              .orderBy('finished_at')
              .limit(PRUNE_BATCH)
              .execute()
          ).map((row) => row.id);
          if (ids.length === 0) return 0;
          await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute();
          await trx.deleteFrom('webhook_deliveries').where('id', 'in', ids).execute();
          return ids.length;
        });
        deleted += count;
        if (count < PRUNE_BATCH) return deleted;
      }
    },

    async listDeliveries(
      webhookId: string,
      limit: number,
      before?: string,
    ): Promise<WebhookDelivery[]> {
      let query = db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('webhook_id', '=', webhookId);
      if (before !== undefined) query = query.where('id', '<', before);
      return deliveriesWithAttempts(await query.orderBy('id', 'desc').limit(limit).execute());
    },

    findDelivery,

    async copyDelivery(
      id: string,
      newId: string,
      nowIso: string,
      nowMs: number,
    ): Promise<WebhookDelivery> {
      await driver.writeTransaction(async (trx) => {
        // A redelivery turns a disabled webhook back on: its waiting deliveries resume, in order.
        await trx
          .updateTable('webhooks')
          .set({ enabled: 1, disabled_at: null, disabled_reason: null })
          .where(
            'id',
            '=',
            trx.selectFrom('webhook_deliveries').select('webhook_id').where('id', '=', id),
          )
          .execute();
        await trx
          .insertInto('webhook_deliveries')
          .columns([
            'id',
            'webhook_id',
            'event_id',
            'event_type',
            'urn',
            'body',
            'state',
            'attempts',
            'next_attempt_at',
            'created_at',
          ])
          .expression((eb) =>
            eb
              .selectFrom('webhook_deliveries')
              .select([
                sql<string>`cast(${newId} as text)`.as('id'),
                'webhook_id',
                'event_id',
                'event_type',
                'urn',
                'body',
                sql.lit('pending').as('state'),
                sql.lit(0).as('attempts'),
                sql<number>`cast(${nowMs} as bigint)`.as('next_attempt_at'),
                sql<string>`cast(${nowIso} as text)`.as('created_at'),
              ])
              .where('id', '=', id),
          )
          .execute();
      });
      return (await findDelivery(newId))!;
    },

    async claimDueDeliveries(
      owner: string,
      limit: number,
      nowMs: number,
      leaseMs: number,
    ): Promise<ClaimedDelivery[]> {
      return driver.writeTransaction(async (trx) => {
        const due = await driver
          .lockSkippingLocked(
            trx
              .selectFrom('webhook_deliveries as d')
              .select('d.id')
              .where(claimable(nowMs))
              .orderBy('d.next_attempt_at')
              .limit(limit),
          )
          .execute();
        if (due.length === 0) return [];
        const rows = await trx
          .updateTable('webhook_deliveries as d')
          .set({
            lease_owner: owner,
            lease_expires_at: nowMs + leaseMs,
            lease_token: sql<number>`lease_token + 1`,
          })
          .where(
            'd.id',
            'in',
            due.map((row) => row.id),
          )
          .where(claimable(nowMs))
          .returningAll()
          .execute();
        if (rows.length === 0) return [];
        const webhooks = await trx
          .selectFrom('webhooks')
          .selectAll()
          .where('id', 'in', [...new Set(rows.map((row) => row.webhook_id))])
          .execute();
        const byId = new Map(webhooks.map((row) => [row.id, rowToWebhook(row)]));
        return rows
          .sort((a, b) => Number(a.event_id) - Number(b.event_id))
          .map((row) => ({
            id: row.id,
            webhook: byId.get(row.webhook_id)!,
            eventId: Number(row.event_id),
            urn: row.urn,
            body: row.body,
            attempts: Number(row.attempts),
            createdAtMs: Date.parse(row.created_at),
            leaseToken: Number(row.lease_token),
          }));
      });
    },

    saveDeliveryOutcome(outcome: DeliveryOutcome): Promise<boolean> {
      return driver.writeTransaction(async (trx) => {
        const { attempt } = outcome;
        const result = await trx
          .updateTable('webhook_deliveries')
          .set({
            state: outcome.state,
            attempts: attempt.attempt,
            next_attempt_at: outcome.nextAttemptAtMs,
            finished_at: outcome.state === 'pending' ? null : attempt.attempted_at,
            lease_owner: null,
            lease_expires_at: null,
          })
          .where('id', '=', outcome.id)
          .where('lease_token', '=', outcome.leaseToken)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return false;
        await trx
          .insertInto('webhook_attempts')
          .values({ delivery_id: outcome.id, ...attempt })
          .execute();
        if (outcome.disable) {
          const disabled = await trx
            .updateTable('webhooks')
            .set({
              enabled: 0,
              disabled_at: attempt.attempted_at,
              disabled_reason: outcome.disable.reason,
            })
            .where('id', '=', outcome.disable.webhookId)
            .where('enabled', '=', 1)
            .executeTakeFirst();
          if (Number(disabled.numUpdatedRows) === 1)
            await driver.appendEvents(trx, [outcome.disable.event], attempt.attempted_at);
        }
        return true;
      });
    },

    async findNextDeliveryDue(nowMs: number): Promise<number | undefined> {
      const row = await db
        .selectFrom('webhook_deliveries as d')
        .select('d.next_attempt_at')
        .where(claimable(nowMs, false))
        .orderBy('d.next_attempt_at')
        .limit(1)
        .executeTakeFirst();
      return row?.next_attempt_at == null ? undefined : Number(row.next_attempt_at);
    },
  };
}

/**
 * What a claim at `nowMs` may take (and, without `dueNow`, what it could take later): a pending
 * delivery of an enabled webhook, due, under no live lease, and with no earlier pending delivery
 * of the same webhook and resource (docs/webhooks.md, "Order"). The next-due look uses the same
 * condition, so a delivery waiting behind another is not "due" and the loop does not spin on it.
 */
function claimable(nowMs: number, dueNow = true) {
  return (eb: ExpressionBuilder<Database & { d: Database['webhook_deliveries'] }, 'd'>) =>
    eb.and([
      // A literal, not a parameter: the due index is partial (`where state = 'pending'`), and a plan
      // made for any value of a parameter (PostgreSQL's generic plan of a prepared statement,
      // postgres/prepared-pool.ts) could not use it.
      eb('d.state', '=', sql.lit('pending')),
      ...(dueNow ? [eb('d.next_attempt_at', '<=', nowMs)] : []),
      eb.or([eb('d.lease_expires_at', 'is', null), eb('d.lease_expires_at', '<=', nowMs)]),
      eb.exists(
        eb
          .selectFrom('webhooks as w')
          .select('w.id')
          .whereRef('w.id', '=', 'd.webhook_id')
          .where('w.enabled', '=', 1),
      ),
      eb.not(
        eb.exists(
          eb
            .selectFrom('webhook_deliveries as e')
            .select('e.id')
            .whereRef('e.webhook_id', '=', 'd.webhook_id')
            .whereRef('e.urn', '=', 'd.urn')
            .whereRef('e.event_id', '<', 'd.event_id')
            .where('e.state', '=', sql.lit('pending')),
        ),
      ),
    ]);
}
