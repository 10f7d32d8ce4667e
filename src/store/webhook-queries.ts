import type { StoredWebhook, WebhookFilter } from '../core/webhooks/webhook.js';
import type { StoreDriver } from './driver.js';
import { rowToWebhook, webhookToRow } from './webhook-rows.js';

/** Webhooks (docs/webhooks.md): the API's book of them. Their deliveries are delivery-queries.ts. */
export function createWebhookQueries(driver: StoreDriver) {
  const { db } = driver;

  return {
    async insertWebhook(webhook: StoredWebhook): Promise<void> {
      await db.insertInto('webhooks').values(webhookToRow(webhook)).execute();
    },

    async findWebhook(id: string): Promise<StoredWebhook | undefined> {
      const row = await db
        .selectFrom('webhooks')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      return row && rowToWebhook(row);
    },

    async listWebhooks(
      filter: WebhookFilter,
      limit: number,
      after?: string,
    ): Promise<StoredWebhook[]> {
      if (filter.projects?.length === 0) return [];
      let query = db.selectFrom('webhooks').selectAll();
      if (filter.projects !== undefined) query = query.where('project', 'in', [...filter.projects]);
      if (after !== undefined) query = query.where('id', '>', after);
      const rows = await query.orderBy('id').limit(limit).execute();
      return rows.map(rowToWebhook);
    },

    async deleteWebhook(id: string): Promise<boolean> {
      return driver.writeTransaction(async (trx) => {
        // The cascade of the foreign keys, spelled out: a SQLite connection may not have them on.
        const deliveries = trx
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('webhook_id', '=', id);
        await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', deliveries).execute();
        await trx.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
        const result = await trx.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
        return Number(result.numDeletedRows) === 1;
      });
    },

    async replaceWebhookSecret(id: string, before: string, after: string): Promise<boolean> {
      const result = await db
        .updateTable('webhooks')
        .set({ secret: after })
        .where('id', '=', id)
        .where('secret', '=', before)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async anyWebhookEnabled(): Promise<boolean> {
      const row = await db
        .selectFrom('webhooks')
        .select('id')
        .where('enabled', '=', 1)
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}
