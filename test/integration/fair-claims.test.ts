import { createServer, type Server, type Socket } from 'node:net';

import { describeEachDialect } from '../helpers/dialects.js';
import { createFakeModule } from '../helpers/fake-module.js';
import { type Harness, startSteward, waitFor } from '../helpers/harness.js';

/**
 * Issue 11: one project's slow backends stalled every project. 24 postgres_server resources
 * pointing at a port that accepts and never answers held all 8 worker slots for pg's 10 s
 * connect timeout, round after round, and another project's one-step file create waited
 * 48.6 s. Claims are now fair across projects (src/core/sync/claim-policy.ts): a project holds at
 * most its share of the slots while another project has work due, and still every slot
 * when it is alone.
 */
describeEachDialect('fair claims across projects', () => {
  let h: Harness | undefined;
  let silent: { servers: Server[]; sockets: Set<Socket>; ports: number[] } | undefined;
  afterEach(async () => {
    // Refusing new connections and dropping the open ones fails the pg connects at once, so no sync outlives the test.
    const closed = Promise.all(
      (silent?.servers ?? []).map((server) => new Promise((resolve) => server.close(resolve))),
    );
    for (const socket of silent?.sockets ?? []) socket.destroy();
    await h?.close();
    for (const socket of silent?.sockets ?? []) socket.destroy();
    await closed;
    h = undefined;
    silent = undefined;
  });

  /** `count` TCP ports that accept connections and never answer (one per postgres_server: each claims its host and port). */
  async function silentServers(count: number) {
    const sockets = new Set<Socket>();
    const servers = Array.from({ length: count }, () =>
      createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
      }),
    );
    await Promise.all(
      servers.map(
        (server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)),
      ),
    );
    const ports = servers.map((server) => (server.address() as { port: number }).port);
    return { servers, sockets, ports };
  }

  async function post(body: unknown): Promise<string> {
    const res = await fetch(`${h!.api}/resources`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(202);
    return ((await res.json()) as { resource: { urn: string } }).resource.urn;
  }

  const status = async (urn: string) => (await h!.steward.queries.getResource(urn)).state;

  it('completes another project’s file create while slow postgres_server syncs of one project hold their connections', async () => {
    silent = await silentServers(8);
    // Four slots (one project may hold two while others wait) and eight slow servers: the shape of 8 slots and 24.
    h = await startSteward({ config: { worker: false, workerConcurrency: 4 } });
    const slow: string[] = [];
    for (let i = 0; i < 8; i += 1) {
      slow.push(
        await post({
          kind: 'postgres_server',
          project: 'slow',
          name: `s${i}`,
          spec: { configs: { host: '127.0.0.1', port: silent.ports[i] } },
        }),
      );
    }
    const fast = await post({
      kind: 'file',
      project: 'fast',
      name: 'motd',
      spec: { configs: { path: 'motd', content: 'hi\n' } },
    });
    h.steward.engine.start();

    await waitFor(
      async () => (await status(fast)).status === 'COMPLETED',
      'the fast project’s file to be COMPLETED',
    );
    // Slow syncs hold the other slots (two within the project's share, the rest filling free slots), none has finished.
    await waitFor(
      () => silent!.sockets.size >= 3 || undefined,
      'three connections to the silent servers',
    );
    expect(silent.sockets.size).toBeLessThanOrEqual(4);
    for (const urn of slow) {
      const state = await status(urn);
      expect({
        urn,
        status: state.status,
        attempts: state.sync.attempts,
        last_error: state.sync.last_error,
      }).toEqual({ urn, status: 'PENDING', attempts: 0, last_error: null });
    }
  }, 30_000);

  it('gives the next free slot to another project, not to the slow project’s queue, when the slow one filled every slot alone', async () => {
    const fake = createFakeModule();
    const gates = new Map<string, () => void>();
    fake.script((call) =>
      call.urn.includes(':slow:')
        ? { type: 'gate', until: new Promise<void>((resolve) => gates.set(call.urn, resolve)) }
        : { type: 'ok' },
    );
    h = await startSteward({
      config: { workerConcurrency: 4 },
      overrides: { extraModules: [{ definition: fake.definition, origin: 'test' }] },
    });
    try {
      const slow: string[] = [];
      for (let i = 0; i < 6; i += 1)
        slow.push(await post({ kind: 'fake', project: 'slow', name: `s${i}` }));
      // Alone, the slow project holds every slot (the claim is work-conserving).
      await waitFor(() => gates.size === 4 || undefined, 'the slow project to fill all four slots');
      const fast = await post({ kind: 'fake', project: 'fast', name: 'f' });

      // One slow sync ends: the freed slot goes to the fast project, though two older slow rows are due.
      gates.get(slow.find((urn) => gates.has(urn))!)!();
      await waitFor(
        async () => (await status(fast)).status === 'COMPLETED',
        'the fast project’s resource to be COMPLETED',
      );
      // The fifth sync call was the fast project's; the slow project's two waiting rows came after it (if at all).
      expect(fake.ledger.calls.map((call) => call.urn.split(':')[3])).toEqual([
        'slow',
        'slow',
        'slow',
        'slow',
        'fast',
        ...Array(fake.ledger.calls.length - 5).fill('slow'),
      ]);
      expect(fake.ledger.calls.length).toBeLessThanOrEqual(7);
    } finally {
      fake.script(() => ({ type: 'ok' }));
      for (const release of gates.values()) release();
    }
  }, 30_000);

  it('lets one project alone use every slot', async () => {
    const fake = createFakeModule();
    const gates: Array<() => void> = [];
    fake.script(() => ({
      type: 'gate',
      until: new Promise<void>((resolve) => gates.push(resolve)),
    }));
    h = await startSteward({
      config: { worker: false, workerConcurrency: 6 },
      overrides: { extraModules: [{ definition: fake.definition, origin: 'test' }] },
    });
    try {
      for (let i = 0; i < 20; i += 1) await post({ kind: 'fake', project: 'only', name: `r${i}` });
      h.steward.engine.start();
      await waitFor(() => fake.ledger.active.size === 6 || undefined, 'six syncs at once');
      expect(fake.ledger.calls).toHaveLength(6);
    } finally {
      fake.script(() => ({ type: 'ok' }));
      for (const release of gates) release();
    }
  }, 30_000);
});
