import { builtinModules, createRequire } from 'node:module';
import { sep } from 'node:path';

import { IO_MODULES, RANDOM_MODULES } from './io-trap.js';

const require = createRequire(import.meta.url);
/** CommonJS's loader; `_load` is internal but stable, and the only place every `require` passes. */
const Module = require('node:module') as {
  _load: (
    request: string,
    parent: { filename?: string } | null | undefined,
    isMain: boolean,
  ) => unknown;
};

/** The built-ins whose functions the traps replace: `fs` and `node:fs` alike. */
const TRAPPED = new Set(
  Object.keys({ ...IO_MODULES, ...RANDOM_MODULES }).map((specifier) => specifier.slice(5)),
);
const folders = new Set<string>();
let installed = false;
const wrappers = new Map<string, object>();

/**
 * Makes every `require` of a trapped built-in (`fs`, `child_process`, `http`, …)
 * made by a file under `folder` return a forwarding copy of it: each function of
 * the copy calls, when it is called, the function the real module holds at that
 * moment. So `const { readFileSync } = require('fs')`, taken when the module
 * loads, still meets the traps `withTraps` and `withWriteTraps` set on the real
 * module later. Call it before the module is loaded; it stays for the process
 * (it changes nothing outside the traps). Under jest the runtime's own `require`
 * does not pass here: there the destructured form is not trapped.
 */
export function trapRequiresUnder(folder: string): void {
  folders.add(folder.endsWith(sep) ? folder : `${folder}${sep}`);
  if (installed) return;
  installed = true;
  const load = Module._load;
  Module._load = function (this: unknown, request, parent, isMain) {
    const loaded = load.call(this, request, parent, isMain);
    const name = request.startsWith('node:') ? request.slice(5) : request;
    const from = parent?.filename;
    if (!TRAPPED.has(name) || !builtinModules.includes(name) || !from) return loaded;
    if (![...folders].some((dir) => from.startsWith(dir))) return loaded;
    return forwarding(name, loaded as object);
  };
}

/** The forwarding copy of built-in `name` (one per built-in). */
function forwarding(name: string, real: object): object {
  const known = wrappers.get(name);
  if (known) return known;
  const functions = new Map<PropertyKey, unknown>();
  const wrapper = new Proxy(real, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (name === 'fs' && key === 'promises') return forwarding('fs/promises', value as object);
      if (typeof value !== 'function') return value;
      if (!functions.has(key))
        functions.set(key, late(target as Record<PropertyKey, unknown>, key, value));
      return functions.get(key);
    },
  });
  wrappers.set(name, wrapper);
  return wrapper;
}

/** A stand-in for `target[key]` that calls (or constructs) whatever `target[key]` is at the time. */
function late(target: Record<PropertyKey, unknown>, key: PropertyKey, original: object): unknown {
  const current = () => target[key] as (...args: unknown[]) => unknown;
  return new Proxy(original, {
    apply: (_fn, thisArg, args) => Reflect.apply(current(), thisArg, args),
    construct: (_fn, args, newTarget) => Reflect.construct(current(), args, newTarget) as object,
  });
}
