import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createFileModule } from '../../modules/file/index.js';
import { silentLogger } from '../../src/core/logging.js';
import { type Resource, TerminalError } from '../../src/sdk/index.js';
import { resourceDocument } from '../helpers/resource-document.js';

/**
 * The file module's day-2 half at the module level (issue 13): `observe` against
 * real files, a create that never takes over a file it did not write, and one that
 * converges after a crash between its write and the write-back.
 */
let root: string;
let outside: string;
let file: ReturnType<typeof createFileModule>;
const ctx = () => ({
  signal: new AbortController().signal,
  log: silentLogger,
  now: () => new Date(),
});
const projectDir = () => join(root, 'demo');

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'steward-file-observe-'));
  outside = mkdtempSync(join(tmpdir(), 'steward-file-outside-'));
  file = createFileModule({ root });
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

function resource(
  action: string,
  configs: Record<string, unknown>,
  data: unknown = null,
  createdAt = '2026-01-01T00:00:00.000Z',
): Resource {
  return resourceDocument({
    kind: 'file',
    project: 'demo',
    name: 'f',
    configs: { content: '', mode: '0644', ...configs },
    action,
    data,
    createdAt,
  });
}

/** Plans `action` over `current`, then syncs until COMPLETED (or a throw), as the engine would. */
async function apply(
  action: string,
  configs: Record<string, unknown>,
  current: Resource | null,
): Promise<Resource> {
  const desired = resource(action, configs, current?.state.data ?? null, current?.created_at);
  const plan = await file.plan({
    action,
    params: {},
    current,
    desired,
    dependencies: {},
    now: new Date(),
  });
  let at: Resource = { ...desired, state: { ...desired.state, data: plan.data } };
  for (;;) {
    const result = await file.sync({ resource: at, dependencies: {} }, ctx());
    at = {
      ...at,
      state: {
        ...at.state,
        data: result.data ?? at.state.data,
        output: result.output ?? at.state.output,
      },
    };
    if (result.status === 'COMPLETED')
      return { ...at, state: { ...at.state, status: 'COMPLETED' } };
  }
}

/** A create as accepted: its planned steps in `state.data`, nothing synced yet. */
async function plannedCreate(configs: Record<string, unknown>): Promise<Resource> {
  const desired = resource('create', configs);
  const plan = await file.plan({
    action: 'create',
    params: {},
    current: null,
    desired,
    dependencies: {},
    now: new Date(),
  });
  return { ...desired, state: { ...desired.state, data: plan.data } };
}

/** Everything `observe` must not change: the bytes, the mode, the times, and what else is in the root. */
function snapshot(path: string) {
  const info = lstatSync(path);
  return {
    bytes: readFileSync(path).toString('base64'),
    mode: info.mode,
    mtimeMs: info.mtimeMs,
    ino: info.ino,
    tree: readdirSync(root, { recursive: true }).sort(),
  };
}

describe('observe', () => {
  it('reads an existing file: its content and mode as configs, the output sync publishes, and the data that holds it', async () => {
    mkdirSync(join(projectDir(), 'etc'), { recursive: true });
    writeFileSync(join(projectDir(), 'etc', 'motd'), 'hello\n');
    chmodSync(join(projectDir(), 'etc', 'motd'), 0o640);
    const observed = await file.observe!(
      { resource: resource('import', { path: 'etc/motd', mode: '640' }), dependencies: {} },
      ctx(),
    );
    expect(observed).toEqual({
      exists: true,
      configs: { path: 'etc/motd', content: 'hello\n', mode: '640' },
      output: {
        path: 'etc/motd',
        size: 6,
        sha256: '5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03',
        mode: '0640',
        mtime: lstatSync(join(projectDir(), 'etc', 'motd')).mtime.toISOString(),
      },
      data: { pending: [], written: 'etc/motd' },
    });
  });

  it('answers the mode in its own spelling when the resource names another, and leaves out what the schema cannot hold', async () => {
    mkdirSync(projectDir());
    writeFileSync(join(projectDir(), 'bin'), Buffer.from([0xff, 0xfe, 0x00]));
    chmodSync(join(projectDir(), 'bin'), 0o4);
    const observed = await file.observe!(
      { resource: resource('refresh', { path: 'bin', mode: '0644' }), dependencies: {} },
      ctx(),
    );
    expect(observed.configs).toEqual({ path: 'bin', mode: '0004' });
  });

  it('answers exists: false for a missing file, and for a missing project directory without making it', async () => {
    const missing = resource('import', { path: 'nothing/here' });
    expect(await file.observe!({ resource: missing, dependencies: {} }, ctx())).toEqual({
      exists: false,
    });
    expect(existsSync(projectDir())).toBe(false);
    mkdirSync(projectDir());
    expect(await file.observe!({ resource: missing, dependencies: {} }, ctx())).toEqual({
      exists: false,
    });
    expect(readdirSync(root, { recursive: true })).toEqual(['demo']);
  });

  it('never reads through a symbolic link out of the root, at the file or above it', async () => {
    writeFileSync(join(outside, 'secret'), 'password=hunter2\n');
    mkdirSync(projectDir());
    symlinkSync(join(outside, 'secret'), join(projectDir(), 'link'));
    symlinkSync(outside, join(projectDir(), 'dir'));
    for (const path of ['link', 'dir/secret']) {
      const observing = file.observe!(
        { resource: resource('import', { path }), dependencies: {} },
        ctx(),
      );
      await expect(observing).rejects.toThrow(TerminalError);
      await expect(observing).rejects.toThrow(/goes through the symbolic link/);
      await expect(observing).rejects.not.toThrow(/hunter2/);
    }
  });

  it('changes nothing: bytes, mode, modification time and the rest of the root are the same afterwards', async () => {
    mkdirSync(projectDir());
    const path = join(projectDir(), 'kept');
    writeFileSync(path, 'as it was\n');
    chmodSync(path, 0o600);
    utimesSync(path, new Date('2020-01-01T00:00:00Z'), new Date('2020-01-01T00:00:00Z'));
    const before = snapshot(path);
    await file.observe!(
      { resource: resource('import', { path: 'kept' }), dependencies: {} },
      ctx(),
    );
    await file.observe!(
      {
        resource: resource('refresh', { path: 'kept', content: 'other', mode: '0644' }),
        dependencies: {},
      },
      ctx(),
    );
    expect(snapshot(path)).toEqual(before);
  });

  it('an imported file (observe data applied) can be updated and then deleted by sync', async () => {
    mkdirSync(projectDir());
    writeFileSync(join(projectDir(), 'adopted'), 'old\n');
    const asked = resource('import', { path: 'adopted' });
    const observed = await file.observe!({ resource: asked, dependencies: {} }, ctx());
    const imported: Resource = {
      ...asked,
      spec: { ...asked.spec, configs: { ...asked.spec.configs, ...observed.configs } },
      state: { ...asked.state, status: 'COMPLETED', output: observed.output!, data: observed.data },
    };
    const updated = await apply(
      'update',
      { path: 'adopted', content: 'new\n', mode: '0600' },
      imported,
    );
    expect(readFileSync(join(projectDir(), 'adopted'), 'utf8')).toBe('new\n');
    expect(lstatSync(join(projectDir(), 'adopted')).mode & 0o777).toBe(0o600);
    await apply('delete', updated.spec.configs, updated);
    expect(existsSync(join(projectDir(), 'adopted'))).toBe(false);
  });
});

describe('create never takes over', () => {
  it('fails on a file that was there before and leaves it byte for byte, even one equal to what it writes', async () => {
    mkdirSync(projectDir());
    const path = join(projectDir(), 'taken');
    for (const [content, mode] of [
      ['someone else\n', 0o600],
      ['same\n', 0o644], // what the create writes: still not its own
    ] as const) {
      writeFileSync(path, content);
      chmodSync(path, mode);
      utimesSync(path, new Date('2020-01-01T00:00:00Z'), new Date('2020-01-01T00:00:00Z'));
      const before = snapshot(path);
      const creating = apply('create', { path: 'taken', content: 'same\n' }, null);
      await expect(creating).rejects.toThrow(TerminalError);
      await expect(creating).rejects.toThrow(
        /^file taken already exists and this resource did not write it/,
      );
      expect({ ...snapshot(path), tree: [] }).toEqual({ ...before, tree: [] });
      // Nor does a delete of the failed resource remove it.
      await apply(
        'delete',
        { path: 'taken', content: 'same\n' },
        resource('create', { path: 'taken', content: 'same\n' }, { pending: [] }),
      );
      expect({ ...snapshot(path), tree: [] }).toEqual({ ...before, tree: [] });
    }
  });

  it('converges when a create is retried after a crash between its write and the write-back', async () => {
    const configs = { path: 'crash/again.txt', content: 'once\n', mode: '0640' };
    const pending = await plannedCreate(configs);
    // The crashed attempt: the file is written, its result never stored.
    expect((await file.sync({ resource: pending, dependencies: {} }, ctx())).status).toBe(
      'PENDING',
    );
    const written = snapshot(join(projectDir(), 'crash', 'again.txt'));
    // The retry starts from the same stored state.
    const retried = await file.sync({ resource: pending, dependencies: {} }, ctx());
    expect(retried).toEqual({
      status: 'PENDING',
      data: { pending: ['chmod'], written: 'crash/again.txt' },
    });
    expect({ ...snapshot(join(projectDir(), 'crash', 'again.txt')), tree: [] }).toEqual({
      ...written,
      tree: [],
    });

    // A later resource of the same name (say the first was orphaned) is another writer: the file is not its own.
    const later = resource('create', configs, pending.state.data, '2026-02-02T00:00:00.000Z');
    await expect(file.sync({ resource: later, dependencies: {} }, ctx())).rejects.toThrow(
      /already exists/,
    );
    expect({ ...snapshot(join(projectDir(), 'crash', 'again.txt')), tree: [] }).toEqual({
      ...written,
      tree: [],
    });
  });

  it('removes the file of a crashed create when the resource is deleted before the write-back', async () => {
    const configs = { path: 'gone.txt', content: 'gone\n' };
    const desired = await plannedCreate(configs);
    await file.sync({ resource: desired, dependencies: {} }, ctx());
    expect(existsSync(join(projectDir(), 'gone.txt'))).toBe(true);
    await apply('delete', configs, desired);
    expect(existsSync(join(projectDir(), 'gone.txt'))).toBe(false);
    expect(existsSync(join(root, '.steward-receipts'))).toBe(false);
  });
});
