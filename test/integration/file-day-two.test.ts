import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

import { type DayTwoClient, dayTwoClient } from '../helpers/day-two-client.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { createFakeModule } from '../helpers/fake-module.js';
import { type Harness, startSteward } from '../helpers/harness.js';

/**
 * The `file` kind's day two end to end (issue 13): a real Steward over real HTTP with its
 * real worker, files made and changed out of band by the test. What the module does alone
 * is file-observe.test.ts; here the request, the engine and the store go with it.
 */
describeEachDialect('file, day two through the API', () => {
  let h: Harness;
  let api: DayTwoClient;
  const blind = createFakeModule({ kind: 'blind', withoutObserve: true });

  beforeAll(async () => {
    h = await startSteward({
      overrides: { extraModules: [{ definition: blind.definition, origin: 'test' }] },
    });
    api = dayTwoClient(h.api);
  });
  afterAll(() => h.close());

  const urnOf = (name: string) => `orn:steward:file:demo:${name}`;
  const onDisk = (path: string) => join(h.dir, 'files', 'demo', path);
  const body = (name: string, configs: Record<string, unknown>, extra = {}) => ({
    kind: 'file',
    project: 'demo',
    name,
    spec: { configs },
    ...extra,
  });

  /** A file the test makes itself, with an old modification time, as someone else's would be. */
  function theirs(path: string, content: string, mode = 0o600) {
    mkdirSync(dirname(onDisk(path)), { recursive: true });
    writeFileSync(onDisk(path), content);
    chmodSync(onDisk(path), mode);
    utimesSync(onDisk(path), new Date('2020-01-01T00:00:00Z'), new Date('2020-01-01T00:00:00Z'));
  }
  /** What "untouched" means: the bytes, the mode, the times and the inode. */
  function snapshot(path: string) {
    const info = lstatSync(onDisk(path));
    return {
      bytes: readFileSync(onDisk(path)).toString('base64'),
      mode: info.mode,
      mtimeMs: info.mtimeMs,
      ino: info.ino,
    };
  }

  it('a create over a file it did not write ends in ERROR saying how to import it, and the file is untouched', async () => {
    theirs('taken.txt', 'someone else\n');
    const before = snapshot('taken.txt');
    const failed = await api.settled(
      await api.create(body('taken', { path: 'taken.txt', content: 'mine\n' })),
    );
    expect(failed.state.status).toBe('ERROR');
    expect(failed.state.sync.last_error).toMatch(
      /^file taken\.txt already exists and this resource did not write it/,
    );
    expect(failed.state.sync.last_error).toContain('import it with `"import": true`');
    expect(snapshot('taken.txt')).toEqual(before);
    // Deleting the failed resource does not remove the file either.
    expect(await api.settled(await api.remove(urnOf('taken')))).toBeNull();
    expect(snapshot('taken.txt')).toEqual(before);
  });

  it('a second resource on the same file is refused (409 naming the holder); the first keeps working', async () => {
    const first = await api.settled(
      await api.create(body('first', { path: 'shared.txt', content: 'one\n' })),
    );
    expect(first.state.status).toBe('COMPLETED');
    const second = await api.create(body('second', { path: './shared.txt', content: 'two\n' }));
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('already_exists');
    expect(second.body.error.message).toContain(urnOf('first'));
    expect((await api.get(urnOf('second'))).error.code).toBe('not_found');
    expect(readFileSync(onDisk('shared.txt'), 'utf8')).toBe('one\n');

    const updated = await api.settled(
      await api.patch(urnOf('first'), { configs: { path: 'shared.txt', content: 'one, again\n' } }),
    );
    expect(updated.state.status).toBe('COMPLETED');
    expect(readFileSync(onDisk('shared.txt'), 'utf8')).toBe('one, again\n');
  });

  it('imports an existing file: COMPLETED with its real output, the file unchanged; a later update and delete act on it', async () => {
    theirs('etc/adopted.conf', 'port = 80\n', 0o640);
    const before = snapshot('etc/adopted.conf');
    const accepted = await api.create(
      body('adopted', { path: 'etc/adopted.conf' }, { import: true }),
    );
    expect(accepted.body.operation.action).toBe('import');
    const imported = await api.settled(accepted);
    expect(imported.state).toMatchObject({
      status: 'COMPLETED',
      action: 'import',
      output: {
        path: 'etc/adopted.conf',
        size: 10,
        mode: '0640',
        mtime: '2020-01-01T00:00:00.000Z',
      },
      drift: { exists: true, fields: {} },
    });
    // The configs the request left out come from the file (mode in the spelling the defaults use).
    expect(imported.spec.configs).toEqual({
      path: 'etc/adopted.conf',
      content: 'port = 80\n',
      mode: '0640',
    });
    expect(snapshot('etc/adopted.conf')).toEqual(before);

    const updated = await api.settled(
      await api.patch(urnOf('adopted'), {
        configs: { path: 'etc/adopted.conf', content: 'port = 8080\n', mode: '0600' },
      }),
    );
    expect(updated.state.status).toBe('COMPLETED');
    expect(readFileSync(onDisk('etc/adopted.conf'), 'utf8')).toBe('port = 8080\n');
    expect(lstatSync(onDisk('etc/adopted.conf')).mode & 0o777).toBe(0o600);
    expect(await api.settled(await api.remove(urnOf('adopted')))).toBeNull();
    expect(existsSync(onDisk('etc/adopted.conf'))).toBe(false);
  });

  it('an import of a missing file ends in ERROR "nothing to import", making nothing', async () => {
    const failed = await api.settled(
      await api.create(body('ghost', { path: 'not/there.txt' }, { import: true })),
    );
    expect(failed.state.status).toBe('ERROR');
    expect(failed.state.sync.last_error).toMatch(/^nothing to import: /);
    expect(existsSync(onDisk('not'))).toBe(false);
  });

  it('an import of a kind without observe is refused (400 naming it), nothing stored', async () => {
    const refused = await api.create({ kind: 'blind', project: 'demo', name: 'b', import: true });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('blind');
    expect((await api.get('orn:steward:blind:demo:b')).error.code).toBe('not_found');
  });

  it('a refresh after the content, then the mode, changed out of band reports exactly that field; a PATCH puts it right', async () => {
    const urn = urnOf('drifty');
    const configs = { path: 'drifty.txt', content: 'as declared\n', mode: '0644' };
    expect((await api.settled(await api.create(body('drifty', configs)))).state.status).toBe(
      'COMPLETED',
    );

    writeFileSync(onDisk('drifty.txt'), 'edited by hand\n');
    const drifted = await api.settled(await api.refresh(urn));
    expect(drifted.state.drift.fields).toEqual({
      '/content': { desired: 'as declared\n', actual: 'edited by hand\n' },
    });
    const events = await api.eventsUntil(urn, 'resource.drifted');
    expect(events.at(-1)!.data.data).toEqual({ fields: ['/content'], exists: true });
    expect(readFileSync(onDisk('drifty.txt'), 'utf8')).toBe('edited by hand\n'); // refresh changes nothing

    const righted = await api.settled(await api.patch(urn, { configs }));
    expect(righted.state.drift.fields).toEqual({});
    expect(readFileSync(onDisk('drifty.txt'), 'utf8')).toBe('as declared\n');
    expect((await api.eventsUntil(urn, 'resource.drift_cleared')).at(-1)!.data.data).toEqual({
      fields: ['/content'],
    });

    chmodSync(onDisk('drifty.txt'), 0o600);
    const modeDrift = await api.settled(await api.refresh(urn));
    expect(modeDrift.state.drift.fields).toEqual({ '/mode': { desired: '0644', actual: '0600' } });
    const again = await api.settled(await api.patch(urn, { configs }));
    expect(again.state.drift.fields).toEqual({});
    expect(lstatSync(onDisk('drifty.txt')).mode & 0o777).toBe(0o644);
  });

  it('observe mode: the create imports, an update only looks, a delete forgets; the file never changes', async () => {
    const urn = urnOf('watched');
    theirs('watched.txt', 'not ours\n');
    const before = snapshot('watched.txt');
    const policy = { mode: 'observe' };
    const created = await api.settled(
      await api.create({
        kind: 'file',
        project: 'demo',
        name: 'watched',
        spec: { configs: { path: 'watched.txt' }, policy },
      }),
    );
    expect(created.state).toMatchObject({ status: 'COMPLETED', output: { size: 9 } });
    expect(created.spec.configs.content).toBe('not ours\n');

    const updated = await api.settled(
      await api.patch(urn, { configs: { path: 'watched.txt', content: 'wanted\n' } }),
    );
    expect(updated.state.status).toBe('COMPLETED');
    expect(updated.state.drift.fields).toEqual({
      '/content': { desired: 'wanted\n', actual: 'not ours\n' },
      '/mode': { desired: '0644', actual: '0600' },
    });
    expect(snapshot('watched.txt')).toEqual(before);

    const forgetting = await api.remove(urn);
    expect(forgetting.body.operation.action).toBe('orphan');
    expect(await api.settled(forgetting)).toBeNull();
    expect(snapshot('watched.txt')).toEqual(before);
  });

  it('an orphan (DELETE ?orphan=true, or on_delete: orphan) leaves the file, which a new resource can then import', async () => {
    for (const [name, query, policy] of [
      ['kept-once', 'orphan=true', undefined],
      ['kept-always', '', { on_delete: 'orphan' }],
    ] as const) {
      const path = `${name}.txt`;
      const made = await api.settled(
        await api.create({
          kind: 'file',
          project: 'demo',
          name,
          spec: { configs: { path, content: `${name}\n` }, ...(policy && { policy }) },
        }),
      );
      expect(made.state.status).toBe('COMPLETED');
      const before = snapshot(path);
      const orphaning = await api.remove(urnOf(name), query);
      expect(orphaning.body.operation.action).toBe('orphan');
      expect(await api.settled(orphaning)).toBeNull();
      expect(snapshot(path)).toEqual(before);

      const adopted = await api.settled(
        await api.create(body(`${name}-again`, { path }, { import: true })),
      );
      expect(adopted.state).toMatchObject({ status: 'COMPLETED', output: { path } });
      expect(adopted.spec.configs.content).toBe(`${name}\n`);
      expect(snapshot(path)).toEqual(before);
    }
  });
});
