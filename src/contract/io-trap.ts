import { createRequire, syncBuiltinESMExports } from 'node:module';

/**
 * Runs a synchronous function with I/O, the wall clock and randomness replaced
 * by throwing versions, and reports every attempt (even one the function caught).
 *
 * The CommonJS module objects of node:fs, node:net, … are patched and
 * `syncBuiltinESMExports()` makes ESM named imports (`import { readFileSync } from
 * 'node:fs'`) see the patch too. Everything is restored in `finally`. The call is
 * synchronous, so nothing else in the process runs while the traps are set.
 *
 * Known gap: under jest's ESM runtime (`--experimental-vm-modules`), named imports
 * of built-ins are snapshots jest takes at link time and are not trapped; default
 * imports (`import fs from 'node:fs'`) and `require` are. Plain node (the CLI) traps all.
 */
export function withTraps<T>(fn: () => T): {
  outcome: { value: T } | { error: unknown };
  attempts: string[];
} {
  const attempts: string[] = [];
  const restore = install(attempts);
  try {
    return { outcome: { value: fn() }, attempts };
  } catch (error) {
    return { outcome: { error }, attempts };
  } finally {
    restore();
  }
}

/** Thrown by a trapped function; plan sees it as any failing call. */
export class TrappedCallError extends Error {
  override readonly name = 'TrappedCallError';
}

const require = createRequire(import.meta.url);

/** module → the functions to trap (`*`: every function the module object holds). */
const IO_MODULES: Record<string, '*' | string[]> = {
  'node:fs': '*',
  'node:fs/promises': '*',
  'node:net': ['connect', 'createConnection'],
  'node:http': ['request', 'get'],
  'node:https': ['request', 'get'],
  'node:child_process': [
    'spawn',
    'spawnSync',
    'exec',
    'execSync',
    'execFile',
    'execFileSync',
    'fork',
  ],
  'node:dns': ['lookup', 'lookupService', 'resolve', 'resolve4', 'resolve6'],
  'node:dns/promises': ['lookup', 'lookupService', 'resolve', 'resolve4', 'resolve6'],
};
type Trapped = 'I/O' | 'clock' | 'randomness';
const FORBIDDEN: Record<Trapped, string> = {
  'I/O': 'do I/O',
  clock: 'read the clock (only input.now)',
  randomness: 'use randomness',
};

const RANDOM_MODULES: Record<string, string[]> = {
  'node:crypto': ['randomUUID', 'randomBytes', 'randomInt', 'randomFillSync', 'getRandomValues'],
};

function install(attempts: string[]): () => void {
  const patcher = createPatcher();
  const trap = (label: string, what: Trapped) => (): never => {
    attempts.push(`${FORBIDDEN[what]}: ${label}`);
    throw new TrappedCallError(`plan must not ${FORBIDDEN[what]}: ${label} was called`);
  };
  try {
    setTraps(trap, patcher.patch, patcher.undo);
  } catch (err) {
    patcher.restore();
    throw err;
  }
  syncBuiltinESMExports();
  return patcher.restore;
}

/**
 * Replaces functions on objects (`patch`) and puts every one back (`restore`,
 * which also re-syncs the ESM named exports of the built-ins). `undo` takes
 * extra steps to run on restore. A property that is not a configurable function
 * is left alone.
 */
export function createPatcher() {
  const undo: Array<() => void> = [];
  const patch = (target: object, key: string, replacement: unknown) => {
    const original = Object.getOwnPropertyDescriptor(target, key);
    if (!original || !('value' in original) || typeof original.value !== 'function') return;
    try {
      Object.defineProperty(target, key, { ...original, value: replacement });
      undo.push(() => Object.defineProperty(target, key, original));
    } catch {
      // a non-configurable property: leave it
    }
  };
  const restore = () => {
    for (const step of undo.reverse()) step();
    undo.length = 0;
    syncBuiltinESMExports();
  };
  return { patch, undo, restore };
}

function setTraps(
  trap: (label: string, what: Trapped) => () => never,
  patch: (target: object, key: string, replacement: unknown) => void,
  undo: Array<() => void>,
): void {
  for (const [specifier, keys] of Object.entries({ ...IO_MODULES, ...RANDOM_MODULES })) {
    const what: Trapped = specifier in RANDOM_MODULES ? 'randomness' : 'I/O';
    const moduleObject = require(specifier) as Record<string, unknown>;
    // '*' skips classes (fs.Stats, fs.Dirent): constructing one is not I/O
    const names =
      keys === '*' ? Object.keys(moduleObject).filter((key) => /^[a-z]/.test(key)) : keys;
    const short = specifier.slice('node:'.length);
    for (const key of names) patch(moduleObject, key, trap(`${short}.${key}()`, what));
  }
  patch(globalThis, 'fetch', trap('fetch()', 'I/O'));
  patch(Math, 'random', trap('Math.random()', 'randomness'));
  // globalThis.crypto's methods live on its prototype: shadow them with own properties
  for (const key of ['randomUUID', 'getRandomValues'] as const) {
    if (
      globalThis.crypto &&
      !Object.hasOwn(globalThis.crypto, key) &&
      typeof globalThis.crypto[key] === 'function'
    ) {
      Object.defineProperty(globalThis.crypto, key, {
        value: trap(`crypto.${key}()`, 'randomness'),
        configurable: true,
        writable: true,
      });
      undo.push(() => delete (globalThis.crypto as unknown as Record<string, unknown>)[key]);
    }
  }
  const RealDate = Date;
  patch(
    globalThis,
    'Date',
    trappedDate(
      RealDate,
      trap('Date.now()', 'clock'),
      trap('new Date()', 'clock'),
      trap('Date()', 'clock'),
    ),
  );
}

/** A Date that refuses to tell the time: `Date.now()`, `new Date()` and `Date()` trap; `new Date(x)` works. */
function trappedDate(
  RealDate: DateConstructor,
  now: () => never,
  construct: () => never,
  call: () => never,
): DateConstructor {
  function TrappedDate(this: unknown, ...args: unknown[]): unknown {
    if (!new.target) return call();
    if (args.length === 0) return construct();
    return Reflect.construct(RealDate, args, new.target) as unknown;
  }
  Object.setPrototypeOf(TrappedDate, RealDate);
  TrappedDate.prototype = RealDate.prototype;
  Object.defineProperty(TrappedDate, 'now', { value: now, configurable: true, writable: true });
  return TrappedDate as unknown as DateConstructor;
}
