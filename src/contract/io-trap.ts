import { createRequire, syncBuiltinESMExports } from 'node:module';

/**
 * Runs a synchronous function with I/O replaced by throwing versions and the wall
 * clock and randomness by recording ones (they still answer, so the function goes
 * on and every impurity it has is found), and reports every attempt (even one the
 * function caught).
 *
 * The CommonJS module objects of node:fs, node:net, … are patched and
 * `syncBuiltinESMExports()` makes ESM named imports (`import { readFileSync } from
 * 'node:fs'`) see the patch too. Everything is restored in `finally`. The call is
 * synchronous, so nothing else in the process runs while the traps are set.
 *
 * A module folder the kit loads has its `require`s of these built-ins routed
 * through forwarding copies (require-trap.ts), so a destructured
 * `const { readFileSync } = require('fs')` is trapped too. Known gap: under jest's
 * ESM runtime (`--experimental-vm-modules`), named imports and destructured
 * requires of built-ins are snapshots jest takes at link time and are not trapped;
 * default imports (`import fs from 'node:fs'`) and `fs.x` through `require` are.
 * Plain node (the CLI) traps all.
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

/** module → the functions to trap (`*`: every function the module object holds whose name starts lower-case). */
export const IO_MODULES: Record<string, '*' | string[]> = {
  'node:fs': '*',
  'node:fs/promises': '*',
  'node:net': ['connect', 'createConnection', 'createServer'],
  'node:tls': ['connect', 'createServer'],
  'node:http': ['request', 'get', 'createServer'],
  'node:https': ['request', 'get', 'createServer'],
  'node:http2': ['connect', 'createServer', 'createSecureServer'],
  'node:dgram': ['createSocket'],
  'node:child_process': '*',
  'node:cluster': ['fork'],
  'node:worker_threads': ['Worker'],
  'node:dns': '*',
  'node:dns/promises': '*',
};
type Trapped = 'I/O' | 'clock' | 'randomness';
const FORBIDDEN: Record<Trapped, string> = {
  'I/O': 'do I/O',
  clock: 'read the clock (only input.now)',
  randomness: 'use randomness',
};

export const RANDOM_MODULES: Record<string, string[]> = {
  'node:crypto': ['randomUUID', 'randomBytes', 'randomInt', 'randomFillSync', 'getRandomValues'],
};

function install(attempts: string[]): () => void {
  const patcher = createPatcher();
  // a function, not an arrow: `new Worker()` must reach it too
  const trap: Trap = (label, what, original) =>
    function trapped(this: unknown, ...args: unknown[]): unknown {
      // the kit's own look at the stack (a source-map hook reads files) passes through
      if (inspecting) return Reflect.apply(original, this, args);
      // Node's own code (fetch's timing in an http module's client) reading the clock is not the plan's doing
      if (what === 'I/O' || !calledByNode()) attempts.push(`${FORBIDDEN[what]}: ${label}`);
      // the clock and randomness are only recorded (plan goes on, so its other impurities are found too); I/O throws
      if (what !== 'I/O') return Reflect.apply(original, this, args);
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
    if (!original && typeof (target as Record<string, unknown>)[key] === 'function') {
      // inherited (performance.now lives on its prototype): shadow it with an own property
      Object.defineProperty(target, key, {
        value: replacement,
        configurable: true,
        writable: true,
      });
      undo.push(() => delete (target as Record<string, unknown>)[key]);
      return;
    }
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

/** True when the trapped function's caller is Node's own code (`node:internal/…`), not the plan's. */
function calledByNode(): boolean {
  inspecting = true;
  try {
    // frames: Error, calledByNode, trapped, the caller
    const caller = new Error().stack?.split('\n')[3] ?? '';
    return caller.includes('node:internal/');
  } finally {
    inspecting = false;
  }
}

/** True while `calledByNode` formats a stack: what a stack-formatting hook calls then is the kit's doing. */
let inspecting = false;

type Trap = (
  label: string,
  what: Trapped,
  original: (...args: unknown[]) => unknown,
) => (...args: unknown[]) => unknown;

function setTraps(
  trap: Trap,
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
    for (const key of names) {
      const original = moduleObject[key] as (...args: unknown[]) => unknown;
      const label = `${/^[A-Z]/.test(key) ? 'new ' : ''}${short}.${key}()`;
      patch(moduleObject, key, trap(label, what, original));
    }
  }
  patch(performance, 'now', trap('performance.now()', 'clock', performance.now.bind(performance)));
  patch(process, 'uptime', trap('process.uptime()', 'clock', process.uptime.bind(process)));
  const realHrtime = process.hrtime.bind(process) as (...args: unknown[]) => unknown;
  const hrtime = Object.assign(trap('process.hrtime()', 'clock', realHrtime), {
    bigint: trap('process.hrtime.bigint()', 'clock', process.hrtime.bigint.bind(process.hrtime)),
  });
  patch(process, 'hrtime', hrtime);
  patch(
    globalThis,
    'fetch',
    trap('fetch()', 'I/O', globalThis.fetch as (...args: unknown[]) => unknown),
  );
  patch(Math, 'random', trap('Math.random()', 'randomness', Math.random));
  // globalThis.crypto's methods live on its prototype: shadow them with own properties
  for (const key of ['randomUUID', 'getRandomValues'] as const) {
    if (
      globalThis.crypto &&
      !Object.hasOwn(globalThis.crypto, key) &&
      typeof globalThis.crypto[key] === 'function'
    ) {
      Object.defineProperty(globalThis.crypto, key, {
        value: trap(
          `crypto.${key}()`,
          'randomness',
          (globalThis.crypto[key] as (...args: unknown[]) => unknown).bind(globalThis.crypto),
        ),
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
      trap('Date.now()', 'clock', () => RealDate.now()),
      trap('new Date()', 'clock', () => new RealDate()),
      trap('Date()', 'clock', () => RealDate()),
    ),
  );
}

/** A Date whose `Date.now()`, `new Date()` and `Date()` go through their traps; `new Date(x)` is a plain Date. */
function trappedDate(
  RealDate: DateConstructor,
  now: () => unknown,
  construct: () => unknown,
  call: () => unknown,
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
