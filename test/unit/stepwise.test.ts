import {
  type Logger,
  type PlanInput,
  type Resource,
  type StepContext,
  stepwise,
  type SyncContext,
} from '../../src/sdk/index.js';

type Configs = { text: string };
type Output = { words: number; dir: string | undefined };
type Data = { pending: string[]; made?: string; log?: string[] };

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const ctx: SyncContext = {
  signal: new AbortController().signal,
  log: silent,
  now: () => new Date(0),
};

function resource(
  action: string,
  data: Data | null,
  text = 'a b c',
): Resource<Configs, Output, Data> {
  return {
    urn: 'orn:steward:note:demo:n',
    kind: 'note',
    project: 'demo',
    name: 'n',
    labels: {},
    version: 1,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    created_by: 'anonymous',
    updated_by: 'anonymous',
    spec: { configs: { text }, dependencies: {}, policy: { mode: 'manage', on_delete: 'delete' } },
    state: {
      status: 'PENDING',
      action,
      operation_id: 'op_1',
      output: {},
      data,
      observed_version: null,
      sync: { attempts: 0, last_error: null, next_sync_at: null, last_synced_at: null },
      paused: false,
      drift: null,
    },
  };
}

/** A module of three steps that records every call in `calls`. */
function note(calls: string[]) {
  return stepwise<Configs, Output, Data>({
    plan: ({ action, params, desired }) => {
      if (action === 'delete') return ['remove'];
      if (action === 'shout')
        return {
          steps: ['write'],
          configs: { text: desired.spec.configs.text.toUpperCase() },
          labels: { loud: String((params as { times: number }).times) },
          data: { log: ['shouted'] },
        };
      if (action === 'broken') return ['write', 'nope'];
      return ['write', 'check'];
    },
    steps: {
      write: (r) => {
        calls.push(`write ${r.spec.configs.text}`);
        return { made: r.state.operation_id };
      },
      check: async (r, stepCtx: StepContext) => {
        calls.push(`check ${Object.keys(stepCtx.dependencies).join(',')} ${r.state.data?.made}`);
      },
      remove: () => {
        calls.push('remove');
      },
    },
    output: (r, stepCtx) => ({
      words: r.spec.configs.text.split(' ').length,
      dir: `${r.state.data?.made}@${stepCtx.now().getTime()}`,
    }),
  });
}

const planInput = (
  action: string,
  current: Resource<Configs, Output, Data> | null,
  params: unknown = {},
): PlanInput<Configs, Output, Data> => ({
  action,
  params,
  current,
  desired: current ?? resource('create', null),
  dependencies: {},
  now: new Date(0),
});

describe('stepwise', () => {
  it('plan: a list becomes data.pending, keeping what the steps recorded', async () => {
    const { plan } = note([]);
    expect(await plan(planInput('create', null))).toEqual({
      data: { pending: ['write', 'check'] },
    });
    const held = resource('update', { pending: [], made: 'op_0' });
    expect(await plan(planInput('delete', held))).toEqual({
      data: { pending: ['remove'], made: 'op_0' },
    });
  });

  it('plan: an object stores its configs, labels and data beside the steps', async () => {
    const { plan } = note([]);
    expect(await plan(planInput('shout', resource('shout', null), { times: 2 }))).toEqual({
      configs: { text: 'A B C' },
      labels: { loud: '2' },
      data: { pending: ['write'], log: ['shouted'] },
    });
  });

  it('sync: one step per call, merging what it returns, PENDING until the last, then COMPLETED with output', async () => {
    const calls: string[] = [];
    const { sync } = note(calls);
    const deps = { db: { urn: 'orn:steward:db:demo:x', kind: 'db', output: {} } };
    const first = await sync(
      { resource: resource('create', { pending: ['write', 'check'] }), dependencies: deps },
      ctx,
    );
    expect(first).toEqual({ status: 'PENDING', data: { pending: ['check'], made: 'op_1' } });
    expect(calls).toEqual(['write a b c']);
    const second = await sync(
      { resource: resource('create', first.data!), dependencies: deps },
      ctx,
    );
    expect(second).toEqual({
      status: 'COMPLETED',
      data: { pending: [], made: 'op_1' },
      output: { words: 3, dir: 'op_1@0' },
    });
    expect(calls).toEqual(['write a b c', 'check db op_1']);
  });

  it('sync: nothing pending is COMPLETED at once, with output', async () => {
    const calls: string[] = [];
    const result = await note(calls).sync(
      { resource: resource('update', { pending: [], made: 'op_0' }), dependencies: {} },
      ctx,
    );
    expect(result).toEqual({
      status: 'COMPLETED',
      data: { pending: [], made: 'op_0' },
      output: { words: 3, dir: 'op_0@0' },
    });
    expect(calls).toEqual([]);
  });

  it('sync: delete ends COMPLETED without output', async () => {
    const calls: string[] = [];
    const result = await note(calls).sync(
      { resource: resource('delete', { pending: ['remove'], made: 'op_0' }), dependencies: {} },
      ctx,
    );
    expect(result).toEqual({ status: 'COMPLETED', data: { pending: [], made: 'op_0' } });
    expect(result).not.toHaveProperty('output');
    expect(calls).toEqual(['remove']);
  });

  it('sync: a step may replace the steps left by returning pending', async () => {
    const again = stepwise<Configs, Output, Data>({
      plan: () => ['check'],
      steps: { check: () => ({ pending: ['write', 'check'] }), write: () => {} },
    });
    expect(
      await again.sync(
        { resource: resource('update', { pending: ['check'] }), dependencies: {} },
        ctx,
      ),
    ).toEqual({ status: 'PENDING', data: { pending: ['write', 'check'] } });
  });

  it('sync: an unknown step is a TerminalError naming it and the steps there are', async () => {
    const { sync } = note([]);
    for (const step of ['nope', 'toString', '__proto__']) {
      await expect(
        sync({ resource: resource('create', { pending: [step] }), dependencies: {} }, ctx),
      ).rejects.toMatchObject({
        name: 'TerminalError',
        message: `the module has no step "${step}" (its steps: write, check, remove)`,
      });
    }
  });

  it('sync: a throwing step fails the call and leaves the data to the caller', async () => {
    const failing = stepwise<Configs, Output, Data>({
      plan: () => ['write'],
      steps: {
        write: () => {
          throw new Error('disk full');
        },
      },
    });
    await expect(
      failing.sync({ resource: resource('create', { pending: ['write'] }), dependencies: {} }, ctx),
    ).rejects.toThrow('disk full');
  });
});
