import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { type DayTwoClient, dayTwoClient } from '../helpers/day-two-client.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { type Harness, startSteward } from '../helpers/harness.js';
import { type Endpoint, spawnEndpoint } from '../helpers/http-endpoint.js';

/**
 * The `http` module's day two end to end (issue 13): a real Steward over real HTTP whose kind
 * `kv_entry` is served by the Python example (examples/http-module-python), with entries of its
 * store file written out of band by the test; and the Node double's description without
 * `has_observe`, whose kind an import must refuse.
 */
const PYTHON_SERVER = fileURLToPath(
  new URL('../../examples/http-module-python/server.py', import.meta.url),
);
const DOUBLE = fileURLToPath(new URL('../fixtures/http-module/double.mjs', import.meta.url));

describeOneDialect('sqlite', 'an http module, day two through the API', () => {
  let dir: string;
  let python: Endpoint;
  let blind: Endpoint;
  let h: Harness;
  let api: DayTwoClient;
  const storeFile = () => join(dir, 'kv.json');
  const urnOf = (name: string) => `orn:steward:kv_entry:demo:${name}`;
  const body = (name: string, configs: Record<string, unknown>, extra = {}) => ({
    kind: 'kv_entry',
    project: 'demo',
    name,
    spec: { configs },
    ...extra,
  });
  const entries = () => JSON.parse(readFileSync(storeFile(), 'utf8')) as Record<string, string>;
  /** Puts an entry in the store file behind the server's back, as an operator's edit would. */
  const setOutOfBand = (key: string, value: string) =>
    writeFileSync(storeFile(), `${JSON.stringify({ ...entries(), [key]: value }, null, 2)}\n`);
  const storeSnapshot = () => ({
    text: readFileSync(storeFile(), 'utf8'),
    mtimeMs: statSync(storeFile()).mtimeMs,
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-http-day-two-'));
    writeFileSync(storeFile(), '{}\n');
    python = await spawnEndpoint('python3', [
      PYTHON_SERVER,
      '--store',
      storeFile(),
      '--port',
      '0',
      '--quiet',
    ]);
    blind = await spawnEndpoint(process.execPath, [DOUBLE, '--description', 'without-observe']);
    h = await startSteward({ config: { httpModules: [python.url, blind.url] } });
    api = dayTwoClient(h.api);
  });
  afterAll(async () => {
    await h?.close();
    await python?.stop();
    await blind?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a second resource on the same key is refused (409, claim_key); the first keeps working', async () => {
    const first = await api.settled(await api.create(body('first', { key: 'shared', value: 'a' })));
    expect(first.state.status).toBe('COMPLETED');
    const second = await api.create(body('second', { key: 'shared', value: 'b' }));
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('already_exists');
    expect(second.body.error.message).toContain(urnOf('first'));
    expect(entries().shared).toBe('a');
    const updated = await api.settled(
      await api.patch(urnOf('first'), { configs: { key: 'shared', value: 'a2' } }),
    );
    expect(updated.state.status).toBe('COMPLETED');
    expect(entries().shared).toBe('a2');
  });

  it('a create over an entry it did not write ends in ERROR saying how to import it; the entry is untouched', async () => {
    setOutOfBand('taken', 'by hand');
    const before = storeSnapshot();
    const refused = await api.settled(
      await api.create(body('taken', { key: 'taken', value: 'from steward' })),
    );
    expect(refused.state.status).toBe('ERROR');
    expect(refused.state.sync.last_error).toMatch(
      /key "taken" already exists and was not written by this resource; import it with "import": true/,
    );
    expect(storeSnapshot()).toEqual(before);
    // Its delete forgets the record and leaves the entry it never wrote.
    expect(await api.settled(await api.remove(urnOf('taken')))).toBeNull();
    expect(storeSnapshot()).toEqual(before);
  });

  it('imports an existing entry: COMPLETED with its real output, the store unchanged; a later update and delete act on it', async () => {
    setOutOfBand('greeting', 'hello');
    const before = storeSnapshot();
    const imported = await api.settled(
      await api.create(body('greeting', { key: 'greeting' }, { import: true })),
    );
    expect(imported.state).toMatchObject({
      status: 'COMPLETED',
      action: 'import',
      output: { key: 'greeting', length: 5, store: storeFile() },
    });
    expect(imported.spec.configs).toEqual({ key: 'greeting', value: 'hello' });
    expect(storeSnapshot()).toEqual(before);

    const updated = await api.settled(
      await api.patch(urnOf('greeting'), { configs: { key: 'greeting', value: 'hi' } }),
    );
    expect(updated.state.status).toBe('COMPLETED');
    expect(entries().greeting).toBe('hi');
    expect(await api.settled(await api.remove(urnOf('greeting')))).toBeNull();
    expect(entries()).not.toHaveProperty('greeting');
  });

  it('an import of a missing entry ends in ERROR "nothing to import"; an import of a kind without has_observe is 400', async () => {
    const before = storeSnapshot();
    const failed = await api.settled(
      await api.create(body('ghost', { key: 'ghost' }, { import: true })),
    );
    expect(failed.state.status).toBe('ERROR');
    expect(failed.state.sync.last_error).toMatch(/^nothing to import: /);
    expect(storeSnapshot()).toEqual(before);

    const refused = await api.create({
      kind: 'remote_double',
      project: 'demo',
      name: 'd',
      import: true,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('remote_double');
    expect((await api.get('orn:steward:remote_double:demo:d')).error.code).toBe('not_found');
  });

  it('a refresh after the value was edited out of band reports exactly /value; a PATCH puts it right', async () => {
    const urn = urnOf('motd');
    await api.settled(await api.create(body('motd', { key: 'motd', value: 'declared' })));
    setOutOfBand('motd', 'edited');
    const drifted = await api.settled(await api.refresh(urn));
    expect(drifted.state.drift.fields).toEqual({
      '/value': { desired: 'declared', actual: 'edited' },
    });
    expect((await api.eventsUntil(urn, 'resource.drifted')).at(-1)!.data.data).toEqual({
      fields: ['/value'],
      exists: true,
    });
    expect(entries().motd).toBe('edited');
    const righted = await api.settled(
      await api.patch(urn, { configs: { key: 'motd', value: 'declared' } }),
    );
    expect(righted.state.drift.fields).toEqual({});
    expect(entries().motd).toBe('declared');
    expect((await api.eventsUntil(urn, 'resource.drift_cleared')).at(-1)!.data.data).toEqual({
      fields: ['/value'],
    });
  });

  it('observe mode: the create imports, an update only looks, a delete forgets; the store never changes', async () => {
    setOutOfBand('theirs', 'untouched');
    const before = storeSnapshot();
    const urn = urnOf('theirs');
    const created = await api.settled(
      await api.create({
        kind: 'kv_entry',
        project: 'demo',
        name: 'theirs',
        spec: { configs: { key: 'theirs' }, policy: { mode: 'observe' } },
      }),
    );
    expect(created.state).toMatchObject({ status: 'COMPLETED', output: { length: 9 } });
    const updated = await api.settled(
      await api.patch(urn, { configs: { key: 'theirs', value: 'mine' } }),
    );
    expect(updated.state.drift.fields).toEqual({
      '/value': { desired: 'mine', actual: 'untouched' },
    });
    const forgetting = await api.remove(urn);
    expect(forgetting.body.operation.action).toBe('orphan');
    expect(await api.settled(forgetting)).toBeNull();
    expect(storeSnapshot()).toEqual(before);
  });

  it('an orphan leaves the entry, which a new resource can then import', async () => {
    const made = await api.settled(await api.create(body('kept', { key: 'kept', value: 'v' })));
    expect(made.state.status).toBe('COMPLETED');
    const before = storeSnapshot();
    const orphaning = await api.remove(urnOf('kept'), 'orphan=true');
    expect(orphaning.body.operation.action).toBe('orphan');
    expect(await api.settled(orphaning)).toBeNull();
    expect(storeSnapshot()).toEqual(before);
    const adopted = await api.settled(
      await api.create(body('kept-again', { key: 'kept' }, { import: true })),
    );
    expect(adopted.state).toMatchObject({ status: 'COMPLETED', output: { key: 'kept' } });
    expect(storeSnapshot()).toEqual(before);
  });
});
