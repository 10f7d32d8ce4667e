import { type BenchInstance, startBenchSteward } from '../../bench/instance.js';
import { NOOP_ACTION, NOOP_KIND, noopUrn } from '../../bench/noop-module.js';
import { scansOfSchedules, scheduleClaimPlans } from '../../bench/schedule-claim-plan.js';
import { describeOneDialect } from '../helpers/dialects.js';

/**
 * The scheduler looks for due schedules every poll, in every worker, however many are stored:
 * its claim must find them from the partial index on next_run_at (migration 0008), never read
 * the table whole (docs/design.md §10; the idle figure in docs/benchmarks.md rests on it). The
 * statements are the store's own, recorded as the claim runs on a real SQLite file.
 */

const MINUTE = 60_000;

describeOneDialect('sqlite', 'the due-schedules claim on SQLite', () => {
  let bench: BenchInstance;

  beforeAll(async () => {
    bench = await startBenchSteward({ worker: false });
  });
  afterAll(async () => {
    await bench.close();
  });

  it('reads the due schedules and the next due time from the schedules_due index, with no scan of schedules', async () => {
    const { steward } = bench;
    const now = Date.now();
    const at = (minutes: number) => new Date(now + minutes * MINUTE).toISOString();
    for (let i = 0; i < 20; i += 1) {
      const name = `r-${i}`;
      await steward.commands.create({ kind: NOOP_KIND, project: 'plan', name }, { actor: 't' });
      const urn = noopUrn('plan', name);
      // One due at the claim's time, the rest far beyond it.
      for (const minutes of [1, 60, 120, 600, 6000])
        await steward.schedules.create(
          urn,
          { request: { action: NOOP_ACTION }, at: at(minutes) },
          't',
        );
    }

    const plans = await scheduleClaimPlans(steward.config.db, now + 2 * MINUTE);

    // Whatever statements the claim is made of (now a SELECT of the due ids, then the UPDATE of
    // those 20), none reads schedules whole, and the due rows are found by the partial index.
    expect(plans.length).toBeGreaterThan(0);
    expect(scansOfSchedules(plans)).toEqual([]);
    expect(plans.flatMap(({ plan }) => plan).join('\n')).toMatch(
      /SEARCH schedules USING INDEX schedules_due \(next_run_at<\?\)/,
    );
    // The look for how long to sleep (findNextScheduleDue) is one step of the same index.
    const nextDue = plans.find(({ sql }) => sql.startsWith('select "next_run_at"'));
    expect(nextDue?.plan).toEqual(['SEARCH schedules USING INDEX schedules_due (next_run_at>?)']);
  });
});
