import { MAX_DEADLINE_MS, parseDeadline } from '../../src/core/requests/deadlines.js';

/** The durations an operation deadline accepts (the due time they bound: decide-write-back.test.ts). */
describe('parseDeadline', () => {
  it.each([
    ['PT1H', 3_600_000],
    ['PT90S', 90_000],
    ['PT1.5S', 1500],
    ['P1DT12H', 36 * 3_600_000],
    ['P2W', 14 * 86_400_000],
    ['PT1H30M', 90 * 60_000],
    ['P365D', MAX_DEADLINE_MS],
    [1, 1],
    [MAX_DEADLINE_MS, MAX_DEADLINE_MS],
  ])('%p is %p ms', (value, ms) => {
    expect(parseDeadline(value)).toBe(ms);
  });

  it.each(['P1Y', 'P1M', 'P', 'PT', 'P1DT', 'PT0S', 'P366D', '1h', 'pt1h', 0, -1, 1.5, null])(
    '%p is refused naming /policy/deadline',
    (value) => {
      expect(() => parseDeadline(value)).toThrow(/^\/policy\/deadline must be/);
    },
  );
});
