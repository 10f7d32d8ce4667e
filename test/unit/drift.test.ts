import { computeDrift, driftEvents, isDrifted } from '../../src/core/sync/drift.js';
import type { Drift, JSONSchema, Resource } from '../../src/sdk/index.js';

const schema: JSONSchema = {
  type: 'object',
  properties: {
    mode: { type: 'string', default: '0644' },
    password: { type: 'string', writeOnly: true },
    login: { type: 'object', properties: { token: { type: 'string', writeOnly: true } } },
    tags: { type: 'array' },
  },
};
const at = '2026-01-01T00:00:00.000Z';

describe('computeDrift', () => {
  it('compares only the configs observe returned, as JSON', () => {
    const drift = computeDrift(
      { mode: '0644', tags: ['a', 'b'], size: 3, path: '/x' },
      { exists: true, configs: { mode: '0600', tags: ['a', 'b'], size: 3 } },
      schema,
      at,
    );
    // path was not returned: not compared (a module that cannot read it, or fills it by default, shows no drift).
    expect(drift).toEqual({
      checked_at: at,
      exists: true,
      fields: { '/mode': { desired: '0644', actual: '0600' } },
      error: null,
    });
  });

  it('shows a differing secret, or a config holding one below it, only as {secret: true}', () => {
    const drift = computeDrift(
      { password: 'a', login: { token: 't1' } },
      { exists: true, configs: { password: 'b', login: { token: 't2' } } },
      schema,
      at,
    );
    expect(drift.fields).toEqual({ '/password': { secret: true }, '/login': { secret: true } });
    expect(JSON.stringify(drift)).not.toMatch(/"(a|b|t1|t2)"/);
    expect(
      computeDrift({ password: 'a' }, { exists: true, configs: { password: 'a' } }, schema, at)
        .fields,
    ).toEqual({});
  });

  it('a config absent from the spec but observed is drift; a missing object has no fields and exists false', () => {
    expect(computeDrift({}, { exists: true, configs: { extra: 1 } }, schema, at).fields).toEqual({
      '/extra': { actual: 1 },
    });
    const missing = computeDrift(
      { mode: 'x' },
      { exists: false, configs: { mode: 'y' } },
      schema,
      at,
    );
    expect(missing).toMatchObject({ exists: false, fields: {} });
    expect(isDrifted(missing)).toBe(true);
    expect(isDrifted(null)).toBe(false);
  });

  it('escapes pointers', () => {
    expect(
      Object.keys(
        computeDrift({}, { exists: true, configs: { 'a/b~c': 1 } }, undefined, at).fields,
      ),
    ).toEqual(['/a~1b~0c']);
  });
});

describe('driftEvents', () => {
  const resource = { urn: 'orn:steward:fake:p:n', kind: 'fake', project: 'p' } as Resource;
  const clean: Drift = { checked_at: at, exists: true, fields: {}, error: null };
  const drifted: Drift = { ...clean, fields: { '/mode': { desired: 1, actual: 2 } } };
  const types = (before: Drift | null, after: Drift) =>
    driftEvents(resource, before, after, 'op').map((e) => [e.type, e.data]);

  it('announces drift when it appears and when it goes, not while it stays', () => {
    expect(types(null, clean)).toEqual([]);
    expect(types(clean, drifted)).toEqual([
      ['resource.drifted', { fields: ['/mode'], exists: true }],
    ]);
    expect(types(drifted, { ...drifted, fields: { '/other': {} } })).toEqual([]);
    expect(types(drifted, clean)).toEqual([['resource.drift_cleared', { fields: ['/mode'] }]]);
  });

  it('announces a failing check when it starts failing and when it works again', () => {
    expect(types(drifted, { ...drifted, error: 'down' })).toEqual([
      ['resource.resync_failed', { error: 'down' }],
    ]);
    expect(types({ ...drifted, error: 'down' }, { ...drifted, error: 'still' })).toEqual([]);
    expect(types({ ...drifted, error: 'down' }, drifted)).toEqual([
      ['resource.resync_recovered', {}],
    ]);
  });
});
