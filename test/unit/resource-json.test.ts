import { createRegistry } from '../../src/core/modules/registry.js';
import { forCaller } from '../../src/core/requests/allowed-actions.js';
import { resourceJsonWriter } from '../../src/core/requests/resource-json.js';
import { resourceView } from '../../src/core/requests/views.js';
import { defineModule } from '../../src/sdk/index.js';
import { type ListedRow, rowToResource, rowToResourceText } from '../../src/store/rows.js';

/**
 * A list page's items are written from the stored JSON text (resource-json.ts): the same
 * characters as the document parsed, put through the view and serialised, for every kind of
 * row; and a resource whose view would differ (secrets) goes through the view.
 */

const plain = defineModule({
  kind: 'plain',
  description: 'A kind with nothing secret.',
  configSchema: { type: 'object', properties: { size: { type: 'number' } } },
  actions: { create: {}, update: {}, delete: {}, poke: {} },
  plan: () => ({ data: null }),
  sync: () => Promise.resolve({ status: 'COMPLETED' as const }),
  observe: () => Promise.resolve({ exists: true }),
});
const vault = defineModule({
  kind: 'vault',
  description: 'A kind with a writeOnly config.',
  configSchema: {
    type: 'object',
    properties: { user: { type: 'string' }, password: { type: 'string', writeOnly: true } },
  },
  actions: { create: {}, update: {}, delete: {} },
  plan: () => ({ data: null }),
  sync: () => Promise.resolve({ status: 'COMPLETED' as const }),
});
const registry = createRegistry([
  { definition: plain, origin: 'test:plain' },
  { definition: vault, origin: 'test:vault' },
]);

const SEALED = '$sealed:v1:0123abcd:AAAAAAAAAAAAAAAAAAAAAA==:QUJD:AAAAAAAAAAAAAAAAAAAAAA==';

function row(overrides: Partial<ListedRow> = {}): ListedRow {
  return {
    urn: 'orn:steward:plain:p:a',
    kind: 'plain',
    project: 'p',
    name: 'a',
    labels: JSON.stringify({ team: 'a', 'tier"x': 'wé\n' }),
    version: 3,
    created_at: '2026-11-27T10:00:00.000Z',
    updated_at: '2026-11-27T10:00:01.000Z',
    created_by: 'alice "the" admin',
    updated_by: 'anonymous',
    configs: JSON.stringify({ size: 2, nested: { list: [1, 'two', null, { '3': true }] } }),
    dependencies: JSON.stringify({ db: 'orn:steward:plain:p:b' }),
    policy: JSON.stringify({ mode: 'manage', on_delete: 'delete' }),
    status: 'COMPLETED',
    action: 'create',
    operation_id: 'op_1',
    output: JSON.stringify({ url: 'http://x/\u2028', n: 1.5e-7 }),
    data: JSON.stringify({ pending: ['a'] }),
    observed_version: 3,
    attempts: 0,
    last_error: null,
    next_sync_at: null,
    last_synced_at: '2026-11-27T10:00:02.000Z',
    waiting_on: null,
    lease_expires_at: null,
    deadline_at: null,
    paused: 0,
    drift: null,
    ...overrides,
  };
}

const rows: Array<[string, ListedRow]> = [
  ['a plain COMPLETED row', row()],
  [
    'a PENDING row, due, waiting, with a deadline and an error',
    row({
      status: 'PENDING',
      next_sync_at: Date.parse('2026-11-27T11:00:00.000Z'),
      waiting_on: JSON.stringify(['orn:steward:plain:p:b']),
      deadline_at: Date.parse('2026-11-27T12:00:00.000Z'),
      last_error: 'failed: "quoted" \\ and \u0001 control',
      attempts: 2,
      observed_version: null,
      data: 'null',
    }),
  ],
  [
    'a leased row (the due time is the lease: not shown)',
    row({ status: 'PENDING', next_sync_at: 5000, lease_expires_at: 5000 }),
  ],
  ['a deadline outliving its operation (not shown)', row({ deadline_at: 7000 })],
  [
    'a paused, observed row with drift',
    row({
      paused: 1,
      policy: JSON.stringify({ mode: 'observe', on_delete: 'orphan' }),
      drift: JSON.stringify({ checked_at: 'x', fields: { '/size': { desired: 2, actual: 3 } } }),
    }),
  ],
  ['an ERROR row', row({ status: 'ERROR', last_error: 'no' })],
  [
    'a kind with a writeOnly config (redacted)',
    row({
      urn: 'orn:steward:vault:p:v',
      kind: 'vault',
      configs: JSON.stringify({ user: 'u', password: SEALED }),
    }),
  ],
  [
    'a sealed value under a kind that marks nothing writeOnly (redacted)',
    row({ configs: JSON.stringify({ size: 1, old: SEALED }) }),
  ],
  [
    'a sealed value in output, its $ escaped (redacted)',
    row({ output: `{"token":"\\u0024${SEALED.slice(1)}"}` }),
  ],
  [
    'a kind no module has (configs and output left out)',
    row({ urn: 'orn:steward:gone:p:g', kind: 'gone' }),
  ],
];

describe('resourceJsonWriter', () => {
  it.each(rows)('%s: the same characters as the view serialised', (_, stored) => {
    const text = rowToResourceText(stored, 0);
    for (const mayChange of [undefined, false, true]) {
      const view = resourceView(rowToResource(stored), registry);
      const expected = JSON.stringify(
        mayChange === undefined ? view : forCaller(view, registry, mayChange),
      );
      expect(resourceJsonWriter(registry, mayChange)(text)).toBe(expected);
    }
  });

  it('never writes a sealed value or a writeOnly config', () => {
    const write = resourceJsonWriter(registry, true);
    for (const [, stored] of rows) {
      const json = write(rowToResourceText(stored, 0));
      expect(json).not.toContain('sealed:');
      expect(JSON.parse(json).spec.configs).not.toHaveProperty('password');
    }
  });

  it('a page of one writer gives each row its own allowed_actions', () => {
    const write = resourceJsonWriter(registry, true);
    const actionsOf = (stored: ListedRow) =>
      JSON.parse(write(rowToResourceText(stored, 0))).allowed_actions as string[];
    expect(actionsOf(row())).toContain('poke');
    expect(actionsOf(row({ paused: 1 }))).toContain('resume');
    expect(
      actionsOf(row({ policy: JSON.stringify({ mode: 'observe', on_delete: 'orphan' }) })),
    ).not.toContain('poke');
    expect(actionsOf(row())).toEqual(
      forCaller(rowToResource(row()), registry, true).allowed_actions,
    );
  });

  it('refuses a row listed without its large columns', () => {
    const text = rowToResourceText(row({ labels: null as unknown as string }), 10);
    expect(text.large).toBeUndefined();
    expect(() => resourceJsonWriter(registry, undefined)(text)).toThrow(
      /without its large columns/,
    );
  });
});
