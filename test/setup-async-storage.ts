import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * jest-circus makes an AsyncLocalStorage for each test file and never disables it, and Node 20 walks
 * every enabled storage for each promise made. `npm test` runs each pass in one process (two cores:
 * one jest worker, so in band), so the 100th test file paid 100 walks per promise, and each old
 * file's module graph stayed reachable: in a profile of test/integration in band, 13 % of the CPU
 * was that walk (`_propagate`) and 18 % garbage collection. A setup file runs in each test file
 * before jest-circus is loaded for it: storages used by earlier files are disabled here, so the
 * list stays one file long. A storage used again is enabled again by Node.
 */
interface UsedStorages {
  used: Set<AsyncLocalStorage<unknown>>;
  recording: boolean;
}

// node:async_hooks is one module for the whole process (jest does not isolate core modules):
// the record of storages hangs on its class, and its methods are wrapped once.
const KEY = Symbol.for('steward.test.used-async-storages');
const holder = AsyncLocalStorage as unknown as Record<symbol, UsedStorages | undefined>;
const storages = (holder[KEY] ??= { used: new Set(), recording: false });

for (const storage of storages.used) storage.disable();
storages.used.clear();

if (!storages.recording) {
  storages.recording = true;
  const proto = AsyncLocalStorage.prototype as unknown as Record<
    'run' | 'enterWith',
    (this: AsyncLocalStorage<unknown>, ...args: unknown[]) => unknown
  >;
  for (const method of ['run', 'enterWith'] as const) {
    const original = proto[method];
    proto[method] = function (this: AsyncLocalStorage<unknown>, ...args: unknown[]) {
      storages.used.add(this);
      return original.apply(this, args);
    };
  }
}
