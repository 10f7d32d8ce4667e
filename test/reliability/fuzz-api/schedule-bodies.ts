/**
 * The bodies of POST /resources/{urn}/schedules (docs/design.md §10) the fuzzer starts from: valid
 * ones to mutate (one of each request and timing, for the seeded kinds), and near misses the
 * mutations would seldom hit: bad times, crons and zones, fields a request does not take, a secret,
 * a NUL. Each answer is checked as any other (a 2xx, or a 4xx that stored nothing).
 */

/** Far enough ahead that nothing the fuzzer makes comes due while it runs (no scheduler runs anyway). */
const LATER = '2099-01-01T00:00:00.000Z';

export const VALID_SCHEDULE_BODIES: unknown[] = [
  { request: { action: 'bump', params: { by: 1 } }, at: LATER },
  {
    request: { action: 'update', configs: { value: 2 }, labels: { team: 'b' }, dependencies: {} },
    cron: '0 2 * * *',
    timezone: 'Europe/Berlin',
  },
  { request: { action: 'delete' }, at: LATER },
  { request: { action: 'retry' }, cron: '*/5 * * * *' },
  { expires_at: LATER },
  // For the chatty kind (the seeded `talker`): its own action.
  { request: { action: 'poke', params: { hard: true } }, cron: '30 2 * * 0', timezone: 'UTC' },
];

export const BAD_SCHEDULE_BODIES: unknown[] = [
  {},
  { request: { action: 'bump', params: { by: 1 } } },
  { request: { action: 'bump', params: { by: 1 } }, at: LATER, cron: '0 2 * * *' },
  { request: { action: 'bump', params: { by: 1 } }, at: '2000-01-01T00:00:00Z' },
  { request: { action: 'bump', params: { by: 1 } }, at: 'tomorrow' },
  { request: { action: 'bump', params: { by: 1 } }, at: '2099-02-30T00:00:00Z' },
  { request: { action: 'bump', params: { by: 1 } }, at: 4102444800000 },
  ...['', ' ', '* * * *', '0 0 2 * * *', '61 * * * *', '0 2 31 2 *', '@reboot', 'L W # ?'].map(
    (cron) => ({ request: { action: 'bump', params: { by: 1 } }, cron }),
  ),
  ...['Mars/Olympus', '', 'utc+1', '../../etc/passwd', 'Europe/Berlin\u0000'].map((timezone) => ({
    request: { action: 'bump', params: { by: 1 } },
    cron: '0 2 * * *',
    timezone,
  })),
  { request: { action: 'delete' }, expires_at: LATER },
  { expires_at: LATER, timezone: 'UTC' },
  { expires_at: '2000-01-01T00:00:00Z' },
  { request: { action: 'create' }, at: LATER },
  { request: { action: 'launch' }, at: LATER },
  { request: { action: 'bump' }, at: LATER },
  { request: { action: 'bump', params: { by: 'x' } }, at: LATER },
  { request: { action: 'delete', params: {} }, at: LATER },
  { request: { action: 'retry', configs: {} }, at: LATER },
  { request: { action: 'bump', params: { by: 1 }, labels: {} }, at: LATER },
  { request: { action: 'update', configs: { steps: 0 } }, at: LATER },
  { request: { action: 'update', configs: { password: 'pw' } }, at: LATER },
  { request: {}, at: LATER },
  { request: 'delete', at: LATER },
  { request: { action: 'delete', extra: true }, at: LATER },
];

/**
 * Near misses a schedule may take, since some are checked when it fires, not when it is made (a
 * 2xx or a 4xx, either is fine): a dependency on a resource gone now, and a label value with NUL
 * (refused with the body now, on both stores: api/body.ts).
 */
export const ODD_SCHEDULE_BODIES: unknown[] = [
  { request: { action: 'update', labels: { team: 'a\u0000b' } }, at: LATER },
  { request: { action: 'update', dependencies: { parent: 'orn:steward:fake:p:gone' } }, at: LATER },
];
