import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { describeEachDialect } from '../helpers/dialects.js';
import { call, type Harness, startSteward, waitForStatus } from '../helpers/harness.js';

/** The seed scenario end to end, over real HTTP, with the real worker and the built-in `file` module. */
describeEachDialect('seed scenario with the file module', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startSteward();
  });
  afterAll(() => h.close());

  const urn = 'orn:steward:file:demo:motd';

  it('creates, syncs step by step, runs actions, and deletes', async () => {
    const created = await call('POST', `${h.api}/resources`, {
      name: 'motd',
      parent: 'demo',
      kind: 'file',
      configs: { path: 'etc/motd', content: 'hello\n' },
      labels: { team: 'ops' },
    });
    expect(created.status).toBe(202);
    expect(created.body.resource.urn).toBe(urn);
    expect(created.body.resource.state.status).toBe('PENDING');
    expect(created.body.resource.state.data).toEqual({ pending: ['write', 'chmod'] });
    expect(created.body.operation.status).toBe('queued');
    expect(created.headers.get('location')).toBe(
      `/api/v1beta1/operations/${created.body.operation.id}`,
    );

    const done = await waitForStatus(h.api, urn, 'COMPLETED');
    // In the project's own directory; the output shows the path as configured, not the server's layout.
    const file = join(h.dir, 'files', 'demo', 'etc', 'motd');
    expect(readFileSync(file, 'utf8')).toBe('hello\n');
    expect(done.state.output).toMatchObject({ path: 'etc/motd', size: 6, mode: '0644' });
    expect(done.state.observed_version).toBe(1);

    const op = await call('GET', `${h.api}/operations/${created.body.operation.id}`);
    expect(op.body).toMatchObject({
      status: 'succeeded',
      action: 'create',
      attempts: 2,
      error: null,
    });

    // A module action through /execute changes configs (a new version) and converges.
    const chmod = await call('POST', `${h.api}/resources/${urn}/execute`, {
      action: 'chmod',
      params: { mode: '0600' },
    });
    expect(chmod.status).toBe(202);
    expect(chmod.body.resource.version).toBe(2);
    expect(chmod.body.resource.state).toMatchObject({ status: 'PENDING', action: 'chmod' });
    const chmodded = await waitForStatus(h.api, urn, 'COMPLETED');
    expect(chmodded.spec.configs.mode).toBe('0600');
    expect(statSync(file).mode & 0o777).toBe(0o600);

    // The same through /actions/{action}.
    const touch = await call('POST', `${h.api}/resources/${urn}/actions/touch`);
    expect(touch.status).toBe(202);
    expect(touch.body.operation.action).toBe('touch');
    await waitForStatus(h.api, urn, 'COMPLETED');

    const update = await call('PATCH', `${h.api}/resources/${urn}`, {
      configs: { path: 'etc/motd', content: 'bye\n', mode: '0640' },
    });
    expect(update.status).toBe(202);
    await waitForStatus(h.api, urn, 'COMPLETED');
    expect(readFileSync(file, 'utf8')).toBe('bye\n');

    const revisions = await call('GET', `${h.api}/resources/${urn}/revisions`);
    expect(revisions.body.revisions.map((r: { version: number }) => r.version)).toEqual([3, 2, 1]);
    expect(revisions.body.revisions[0].changes).toEqual([
      { path: '/configs/content', from: 'hello\n', to: 'bye\n' },
      { path: '/configs/mode', from: '0600', to: '0640' },
    ]);

    const deleted = await call('DELETE', `${h.api}/resources/${urn}`);
    expect(deleted.status).toBe(202);
    expect(deleted.body.operation.action).toBe('delete');
    await waitForStatus(h.api, urn, 'GONE');
    expect(existsSync(file)).toBe(false);

    const ops = await call('GET', `${h.api}/operations?urn=${urn}`);
    expect(
      ops.body.operations.map((o: { action: string; status: string }) => `${o.action}:${o.status}`),
    ).toEqual([
      'delete:succeeded',
      'update:succeeded',
      'touch:succeeded',
      'chmod:succeeded',
      'create:succeeded',
    ]);
    // History stays after the resource is gone.
    expect((await call('GET', `${h.api}/resources/${urn}/revisions`)).body.revisions).toHaveLength(
      3,
    );
  });

  it('refuses a path that escapes the root with a 400 and stores nothing', async () => {
    const res = await call('POST', `${h.api}/resources`, {
      kind: 'file',
      project: 'demo',
      name: 'evil',
      spec: { configs: { path: '../../etc/passwd' } },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect((await call('GET', `${h.api}/resources/orn:steward:file:demo:evil`)).status).toBe(404);
  });
});
