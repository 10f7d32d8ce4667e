import { defineModule, type LogChunk } from '../../src/sdk/index.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { call, type Harness, startSteward, waitForStatus } from '../helpers/harness.js';

/** A module with logs: five stored lines, then (when following) one line every 5 ms until the reader leaves. */
const chatty = defineModule({
  kind: 'chatty',
  description: 'Has logs.',
  configSchema: { type: 'object' },
  actions: { create: {}, update: {}, delete: {} },
  plan: () => ({}),
  sync: () => Promise.resolve({ status: 'COMPLETED' as const }),
  async *logs({ resource }, { follow, tail, signal }): AsyncIterable<LogChunk> {
    const stored = [1, 2, 3, 4, 5].map((i) => ({
      ts: new Date(0).toISOString(),
      line: `${resource.name} line ${i}`,
    }));
    yield* tail === undefined ? stored : stored.slice(stored.length - tail);
    for (let i = 6; follow && !signal.aborted; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      yield { ts: new Date(0).toISOString(), line: `${resource.name} line ${i}` };
    }
  },
});

describeEachDialect('GET /resources/{urn}/logs', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startSteward({
      overrides: { extraModules: [{ definition: chatty, origin: 'test' }] },
    });
    await call('POST', `${h.api}/resources`, { kind: 'chatty', project: 'p', name: 'c' });
    await call('POST', `${h.api}/resources`, {
      kind: 'file',
      project: 'p',
      name: 'f',
      spec: { configs: { path: 'f' } },
    });
    await waitForStatus(h.api, 'orn:steward:chatty:p:c', 'COMPLETED');
  });
  afterAll(() => h.close());

  it('streams newline-delimited JSON, with tail', async () => {
    const res = await fetch(`${h.api}/resources/orn:steward:chatty:p:c/logs?tail=2`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as LogChunk);
    expect(lines.map((l) => l.line)).toEqual(['c line 4', 'c line 5']);
  });

  it('follows until the client goes away', async () => {
    const controller = new AbortController();
    const res = await fetch(`${h.api}/resources/orn:steward:chatty:p:c/logs?follow=true`, {
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    let text = '';
    while (text.split('\n').length < 9)
      text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    expect(text.split('\n').slice(0, 8)).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8].map((i) =>
        JSON.stringify({ ts: new Date(0).toISOString(), line: `c line ${i}` }),
      ),
    );
  });

  it('answers 400 for a kind without logs, 404 for a missing resource, 400 for bad parameters', async () => {
    const none = await call('GET', `${h.api}/resources/orn:steward:file:p:f/logs`);
    expect(none.status).toBe(400);
    expect(none.body.error).toMatchObject({
      code: 'invalid_request',
      message: 'kind file has no logs',
    });
    expect((await call('GET', `${h.api}/resources/orn:steward:chatty:p:missing/logs`)).status).toBe(
      404,
    );
    expect(
      (await call('GET', `${h.api}/resources/orn:steward:chatty:p:c/logs?tail=-1`)).status,
    ).toBe(400);
    expect(
      (await call('GET', `${h.api}/resources/orn:steward:chatty:p:c/logs?follow=yes`)).status,
    ).toBe(400);
  });
});
