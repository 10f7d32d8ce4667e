import fc from 'fast-check';

import { expectError } from '../../helpers/fake-steward.js';
import { expectAudited, replayable, send } from './automation.js';
import { deliverDue, webhookOfRun } from './automation-webhooks.js';
import { type Command, command } from './commands.js';

/**
 * The commands of issue 16's automation API in the state machine test (automation.ts):
 * a keyed write sent again, and a look at the audit log. Neither changes the model:
 * the agreement check after each command sees that nothing changed in Steward either.
 */

/** What the runs did, for the report. */
export const automationCounts = { replayed: 0, reused: 0, audits: 0, deliveries: 0 };

/**
 * Sends the `which`-th stored keyed write again with its key (docs/api.md "Idempotency keys"):
 * the same request replays the first answer, exactly, with `Idempotent-Replayed: true`;
 * another body under the same key is refused with 422 `idempotency_key_reused`.
 */
export const resend = (c: { which: number; same: boolean }) =>
  command(
    `send write #${c.which} again with its key${c.same ? '' : ' and another body or query'}`,
    async (m, r) => {
      const writes = replayable(m);
      const first = writes[c.which % writes.length]!;
      // The answer's URL is the incarnation's of the time; the key is the caller's, on any incarnation.
      const url = new URL(first.url);
      url.host = new URL(r.api).host;
      // Another request: another body, or for a write without one (whose body Steward does not read), another query.
      const bodiless = first.body === undefined;
      if (!c.same && bodiless) url.searchParams.set('dry_run', 'false');
      const body = c.same || bodiless ? first.body : { ...(first.body as object), another: true };
      const res = await send(m, first.key, first.method, url.href, body, first.headers);
      if (!c.same) {
        automationCounts.reused += 1;
        return expectError(res, 422, 'idempotency_key_reused');
      }
      automationCounts.replayed += 1;
      expect({
        status: res.status,
        body: res.body,
        etag: res.headers.get('etag'),
        location: res.headers.get('location'),
        replayed: res.headers.get('idempotent-replayed'),
      }).toEqual({
        status: first.res.status,
        body: first.res.body,
        etag: first.res.headers.get('etag'),
        location: first.res.headers.get('location'),
        replayed: 'true',
      });
    },
    (m) => replayable(m).length > 0,
  );

/** Every write sent so far is in the audit log once, as it was answered. */
export const audit = () =>
  command('every write is in the audit log', async (m, r) => {
    automationCounts.audits += 1;
    await expectAudited(m, r);
  });

/**
 * One pass of the webhook delivery loop, the receiver answering 500 or 2xx (docs/webhooks.md): a
 * failed delivery waits and is tried again; the end of the run checks that all arrived, in order.
 */
export const deliver = (c: { failing: boolean }) =>
  command(
    `webhook deliveries sent${c.failing ? ', the receiver failing' : ''}`,
    async (m, r) => {
      const webhook = webhookOfRun(m)!;
      webhook.receiver.failing = c.failing;
      automationCounts.deliveries += 1;
      await deliverDue(r);
    },
    (m) => webhookOfRun(m) !== undefined,
  );

export const AUTOMATION_COMMANDS: Array<fc.Arbitrary<Command>> = [
  fc.record({ which: fc.nat(), same: fc.constant(true) }).map(resend),
  fc.record({ which: fc.nat(), same: fc.constant(true) }).map(resend),
  fc.record({ which: fc.nat(), same: fc.constant(false) }).map(resend),
  fc.constant(null).map(audit),
  fc.record({ failing: fc.boolean() }).map(deliver),
];
