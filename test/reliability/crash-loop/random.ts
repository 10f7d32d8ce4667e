/**
 * A seeded generator (mulberry32) for the crash loop's decisions: what to send, to which
 * resource, and when to kill. The same seed makes the same decisions; the moments they
 * land on still depend on how fast the machine is, so a rerun is close, not identical.
 */
export interface Random {
  readonly seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
}

/** STEWARD_CRASH_SEED when set, else a fresh seed (printed by the suite so a failure can be rerun). */
export function crashSeed(): number {
  const given = process.env.STEWARD_CRASH_SEED;
  if (given !== undefined && given !== '') {
    const seed = Number(given);
    if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32)
      throw new Error(`STEWARD_CRASH_SEED=${given} is not an integer in [0, 2^32)`);
    return seed;
  }
  return Math.floor(Math.random() * 2 ** 32);
}

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return {
    seed,
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (probability) => next() < probability,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[Math.floor(next() * items.length)]!;
    },
  };
}
