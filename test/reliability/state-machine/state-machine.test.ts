import fc from 'fast-check';

import { describeEachDialect } from '../../helpers/dialects.js';
import { soak } from '../../helpers/soak.js';
import { expectAudited } from './automation.js';
import * as auto from './automation-commands.js';
import { AUTOMATION_COMMANDS, automationCounts } from './automation-commands.js';
import { expectDelivered, makeWebhook, startReceiver } from './automation-webhooks.js';
import * as cmd from './commands.js';
import {
  type Command,
  counts,
  DEPENDENCY_POLL_MS,
  LEASE_MS,
  MAX_ATTEMPTS,
  rowsSeen,
} from './commands.js';
import * as design from './design.js';
import * as sch from './schedule-commands.js';
import { SCHEDULE_COMMANDS, scheduleCounts } from './schedule-commands.js';
import { startModelSteward } from './steward.js';

/**
 * docs/design.md §4 as a model-checked state machine. Random sequences of requests (create,
 * PATCH with and without If-Match, a module action, delete, retry, cancel), worker
 * rounds (also with requests arriving mid-sync), scripted sync outcomes, the passing
 * of time, restarts, and Stewards stopped, killed or frozen mid-sync on one database; and the
 * schedules of §10 (schedules.ts, schedule-commands.ts): made, listed, read, deleted, and fired by
 * scheduler steps on the moved clock; and the automation API of §13 (automation*.ts): every write
 * keyed and sent again, every write found once in GET /audit, OPTIONS against the allowed actions,
 * and a webhook whose receiver must get every event, signed, each resource's in order.
 * After every command the real Steward, read over HTTP, must agree with the model
 * (design.ts and worker.ts beside this file): each resource's status, action,
 * version, attempts and error, each operation's status and attempts, each revision,
 * and the status code and error code of every answer.
 */

const RUNS = soak(15, 300);
const MAX_COMMANDS = soak(40, 80);
/** A schedule waits for a PENDING resource this long after its due time (a few ticks), then is `missed`. */
const SCHEDULE_GRACE_MS = 3_000;
/** The scheduler looks again at a held schedule after this: STEWARD_POLL_INTERVAL_MS, the harness's 50 ms. */
const SCHEDULER_POLL_MS = 50;

/** Runs `commands` against a new model and a new Steward on a new database. */
async function runCommands(commands: Iterable<Command>): Promise<void> {
  const startMs = Date.now();
  const real = await startModelSteward({
    startMs,
    leaseMs: LEASE_MS,
    maxAttempts: MAX_ATTEMPTS,
    dependencyPollMs: DEPENDENCY_POLL_MS,
    scheduleGraceMs: SCHEDULE_GRACE_MS,
    pollIntervalMs: SCHEDULER_POLL_MS,
  });
  const model = design.createModel(startMs, LEASE_MS, MAX_ATTEMPTS, DEPENDENCY_POLL_MS, {
    graceMs: SCHEDULE_GRACE_MS,
    pollMs: SCHEDULER_POLL_MS,
  });
  const receiver = await startReceiver();
  try {
    await makeWebhook(model, real, receiver);
    await fc.asyncModelRun(() => ({ model, real }), commands);
    // Every write of the run, in the audit log once (docs/api.md "Audit").
    await expectAudited(model, real);
    // Every event since the webhook was made, delivered (docs/webhooks.md).
    await expectDelivered(model, real);
  } finally {
    await real.close();
    await receiver.close();
  }
  counts.runs += 1;
}

describeEachDialect('the state machine of docs/design.md §4', () => {
  it(
    'agrees with the model after every command',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          cmd.PRELUDE,
          fc.commands([...cmd.COMMANDS, ...SCHEDULE_COMMANDS, ...AUTOMATION_COMMANDS], {
            maxCommands: MAX_COMMANDS,
            size: 'max',
          }),
          (creates, commands) => runCommands([...creates, ...commands]),
        ),
        { numRuns: RUNS },
      );
      // The figures docs/reliability.md quotes, and how often each row of §4 was met.
      const rows = [...rowsSeen]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([row, n]) => `  ${row}: ${n}`);
      console.log(
        `state machine: ${counts.runs} runs, ${counts.commands} commands (${counts.requests} requests, ${counts.denied} of them denied; ` +
          `${counts.syncs} sync calls; ${counts.interrupted} rounds interrupted; same-round wakes ${JSON.stringify(counts.sameRoundWakes)}; ` +
          `schedules ${JSON.stringify(scheduleCounts)}; automation ${JSON.stringify(automationCounts)})\n${rows.join('\n')}`,
      );
    },
    soak(300_000, 3 * 3_600_000),
  );

  // Found by this model (docs/design.md §6: a worker that lost its lease writes nothing; no two syncs of one
  // resource at once). Lease tokens used to start again at 0 when a URN was created again, and a
  // discarded write-back gives its lease back by URN and token: the frozen Steward, coming back, freed
  // the lease the killed one held on the new `a`, which the next worker step then claimed before that
  // lease ended. Tokens now start at the creation time (src/store/accepted-rows.ts).
  it('a frozen Steward that comes back does not free the lease of a re-created resource', async () => {
    await expectAgreementAlong([
      cmd.create({ name: 'a', configs: {} }),
      cmd.interrupt('frozen'),
      cmd.tick(LEASE_MS),
      cmd.remove({ name: 'a', ifMatch: 'none', via: 'DELETE' }),
      cmd.step(),
      cmd.create({ name: 'a', configs: {} }),
      cmd.interrupt('killed'),
      cmd.thaw(),
      cmd.step(),
    ]);
  });

  // Found by this model (docs/design.md §11: a delete is allowed from any status). The delete of a
  // dependent refused a dependency being deleted (400 "is being deleted"), as a create does: after a
  // cascade's delete of `c` was cancelled, neither DELETE of `c` nor the cascade again went through,
  // and `a` waited on `c` for ever. A removal now plans with such a dependency
  // (src/core/requests/dependencies.ts `removing`).
  it('a dependent whose cascaded delete was cancelled can be deleted again', async () => {
    await expectAgreementAlong([
      cmd.create({ name: 'a', configs: {} }),
      cmd.create({ name: 'c', configs: {} }),
      cmd.step(),
      cmd.step(),
      cmd.remove({ name: 'a', ifMatch: 'none', via: 'DELETE', cascade: true }),
      cmd.cancel({ name: 'c', which: 'newest' }),
      cmd.remove({ name: 'c', ifMatch: 'none', via: 'DELETE' }),
      cmd.step(),
      cmd.step(),
    ]);
  });

  // Issue 16 along a known path: writes sent again with their keys (#0 is the run's webhook), with the same request
  // (replayed) and another (422: a DELETE, which has no body, gets another query), a delivery round while the
  // receiver fails, and the audit log.
  it('automation: keyed writes sent again replay or are refused, every write is audited, deliveries catch up', async () => {
    const before = { ...automationCounts };
    await expectAgreementAlong([
      cmd.create({ name: 'a', configs: {} }),
      cmd.remove({ name: 'a', ifMatch: 'none', via: 'DELETE' }),
      auto.resend({ which: 2, same: true }),
      auto.resend({ which: 2, same: false }),
      auto.resend({ which: 1, same: false }),
      auto.deliver({ failing: true }),
      cmd.step(),
      auto.deliver({ failing: true }),
      auto.resend({ which: 0, same: true }),
      auto.audit(),
    ]);
    expect(automationCounts.replayed - before.replayed).toBe(2);
    expect(automationCounts.reused - before.reused).toBe(2);
  });

  // §10 along known paths, so each run meets every outcome whatever the random runs drew.
  it('schedules: a one-shot fires once, a refused request fails, a cron fires once for the runs it missed', async () => {
    const bump = { action: 'bump' as const, params: { by: 1 } };
    const before = { ...scheduleCounts };
    await expectAgreementAlong([
      cmd.create({ name: 'a', configs: {} }),
      cmd.create({ name: 'b', configs: {} }),
      cmd.step(),
      sch.createSchedule({ name: 'a', request: bump, when: { at: 500 } }),
      // Due at the same instant: either may fire first.
      sch.createSchedule({
        name: 'b',
        request: { action: 'update', configs: { value: design.REFUSED_VALUE } },
        when: { at: 500 },
      }),
      sch.createSchedule({ name: 'b', request: bump, when: { at: 0 } }),
      sch.runNextDue(),
      cmd.step(),
      cmd.tick(LEASE_MS),
      sch.schedulerStep(),
      sch.createSchedule({ name: 'a', request: bump, when: { everyMinutes: 1 } }),
      sch.runNextDue(),
      cmd.step(),
      cmd.tick(3 * 60_000),
      sch.schedulerStep(),
      sch.schedulerStep(),
      sch.listSchedules({ name: 'a' }),
      sch.getSchedule({ which: 0 }),
      sch.deleteSchedule({ which: 2 }),
      sch.deleteSchedule({ which: 2 }),
      sch.getSchedule({ which: 'unknown' }),
    ]);
    // The one-shot, the cron's first run and its three missed runs as one; b's refused update.
    expect(countsSince(before)).toEqual({ made: 3, refused: 1, steps: 5, fired: 3, failed: 1 });
  });

  it('schedules: a PENDING resource holds a run until the grace is over; a delete does not wait, and takes the schedules with the resource', async () => {
    const bump = { action: 'bump' as const, params: { by: 2 } };
    const before = { ...scheduleCounts };
    await expectAgreementAlong([
      cmd.create({ name: 'a', configs: {} }),
      cmd.create({ name: 'b', configs: {} }),
      sch.createSchedule({ name: 'a', request: bump, when: { at: 500 } }),
      sch.createSchedule({
        name: 'b',
        request: { action: 'update', configs: { value: 2 } },
        when: { at: 1_500 },
      }),
      cmd.pause({ name: 'b', paused: true }),
      sch.runNextDue(),
      cmd.step(),
      sch.runNextDue(),
      sch.runNextDue(),
      cmd.tick(LEASE_MS),
      sch.schedulerStep(),
      cmd.tick(LEASE_MS),
      sch.schedulerStep(),
      sch.createSchedule({ name: 'b', request: bump, when: { expiresAt: 500 } }),
      sch.createSchedule({
        name: 'b',
        request: { action: 'retry' },
        when: { everyMinutes: 2, timezone: 'Europe/Berlin' },
      }),
      sch.runNextDue(),
      cmd.pause({ name: 'b', paused: false }),
      cmd.step(),
      sch.listSchedules({ name: 'b' }),
      sch.getSchedule({ which: 1 }),
    ]);
    // a's bump held once, then fired; b's update held twice (paused), then missed; b's expiry fired.
    expect(countsSince(before)).toEqual({ made: 4, steps: 6, held: 3, fired: 2, missed: 1 });
  });
});

/** What the schedule commands did since `before` (a copy of scheduleCounts). */
function countsSince(before: typeof scheduleCounts): Partial<typeof scheduleCounts> {
  return Object.fromEntries(
    Object.entries(scheduleCounts)
      .map(([key, n]) => [key, n - before[key as keyof typeof scheduleCounts]])
      .filter(([, n]) => n !== 0),
  );
}

/** Runs a known sequence: the model and Steward agree after each of its commands, all of them run. */
async function expectAgreementAlong(sequence: Command[]): Promise<void> {
  const agreed: string[] = [];
  const tracked = sequence.map((c): Command => ({
    ...c,
    run: async (m, r) => (await c.run(m, r), void agreed.push(String(c))),
    toString: () => String(c),
  }));
  await runCommands(tracked);
  expect(agreed).toEqual(sequence.map(String));
}
