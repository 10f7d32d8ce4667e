import { describeEachDialect } from '../helpers/dialects.js';
import { createFakeModule } from '../helpers/fake-module.js';
import { call, type Harness, startSteward, waitForStatus } from '../helpers/harness.js';

/** writeOnly configs and outputs reach the module and nobody else: no response, revision or log line. */
describeEachDialect('secrets', () => {
  let h: Harness;
  const fake = createFakeModule();
  beforeAll(async () => {
    h = await startSteward({
      captureLogs: true,
      config: { logLevel: 'debug' },
      overrides: { extraModules: [{ definition: fake.definition, origin: 'test' }] },
    });
  });
  afterAll(() => h.close());

  it('never returns or logs a writeOnly config or output', async () => {
    const password = 'hunter2-config-secret';
    const urn = 'orn:steward:fake:p:vault';
    const seen: string[] = [];
    const record = async (method: string, path: string, body?: unknown) => {
      const res = await call(method, `${h.api}${path}`, body);
      seen.push(JSON.stringify(res.body), JSON.stringify([...res.headers]));
      return res;
    };

    const created = await record('POST', '/resources', {
      kind: 'fake',
      project: 'p',
      name: 'vault',
      spec: { configs: { password, value: 1 } },
    });
    expect(created.status).toBe(202);
    expect(created.body.resource.spec.configs).toEqual({ value: 1, steps: 1 });
    const done = await waitForStatus(h.api, urn, 'COMPLETED');
    seen.push(JSON.stringify(done));
    expect(done.state.output).toEqual({ value: 1, dependencies: [] });

    // The module did see both secrets.
    const synced = await h.steward.store.findResource(urn);
    expect(synced!.spec.configs.password).toBe(password);
    expect(synced!.state.output.token).toBe('secret-token-value');

    await record('PATCH', `/resources/${urn}`, {
      configs: { password: `${password}-2`, value: 2 },
    });
    await waitForStatus(h.api, urn, 'COMPLETED');
    // A PATCH that leaves the secret out (the client never saw it) keeps the stored one.
    await record('PATCH', `/resources/${urn}`, { configs: { value: 3 } });
    await waitForStatus(h.api, urn, 'COMPLETED');
    expect((await h.steward.store.findResource(urn))!.spec.configs.password).toBe(`${password}-2`);
    await record('POST', `/resources/${urn}/actions/bump`, { by: 1 });
    await waitForStatus(h.api, urn, 'COMPLETED');
    await record('GET', `/resources/${urn}`);
    await record('GET', '/resources');
    await record('GET', `/resources/${urn}/revisions`);
    await record('GET', `/operations?urn=${urn}`);
    await record('POST', '/resources?dry_run=true', {
      kind: 'fake',
      project: 'p',
      name: 'vault2',
      spec: { configs: { password } },
    });
    await record('DELETE', `/resources/${urn}`);
    await waitForStatus(h.api, urn, 'GONE');

    for (const text of [...seen, ...h.logs]) {
      expect(text).not.toContain(password);
      expect(text).not.toContain('secret-token-value');
    }
    expect(h.logs.length).toBeGreaterThan(5);
    expect(
      h.logs.some(
        (line) =>
          line.includes('"urn":"orn:steward:fake:p:vault"') && line.includes('"operationId":"op_'),
      ),
    ).toBe(true);
  });
});
