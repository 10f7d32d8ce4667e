import type { ListedRow } from '../../src/store/rows.js';

/** A sealed value's form (core/secrets): what no API answer may hold. */
export const SEALED = '$sealed:v1:0123abcd:AAAAAAAAAAAAAAAAAAAAAA==:QUJD:AAAAAAAAAAAAAAAAAAAAAA==';

/** A writeOnly value as stored without STEWARD_SECRET_KEY (in plain text): what no API answer may hold either. */
export const PLAIN_SECRET = 'hunter2-plain-secret';

/** A stored resource row of kind `plain` (test/unit/resource-json.test.ts's registry: `plain`, `vault` with a writeOnly config, `keeper` with a writeOnly output), changed by `overrides`. */
export function resourceRow(overrides: Partial<ListedRow> = {}): ListedRow {
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

/** Every kind of stored row the API writes differently, named. */
export const STORED_ROWS: Array<[string, ListedRow]> = [
  ['a plain COMPLETED row', resourceRow()],
  [
    'a PENDING row, due, waiting, with a deadline and an error',
    resourceRow({
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
    resourceRow({ status: 'PENDING', next_sync_at: 5000, lease_expires_at: 5000 }),
  ],
  ['a deadline outliving its operation (not shown)', resourceRow({ deadline_at: 7000 })],
  [
    'a paused, observed row with drift',
    resourceRow({
      paused: 1,
      policy: JSON.stringify({ mode: 'observe', on_delete: 'orphan' }),
      drift: JSON.stringify({ checked_at: 'x', fields: { '/size': { desired: 2, actual: 3 } } }),
    }),
  ],
  ['an ERROR row', resourceRow({ status: 'ERROR', last_error: 'no' })],
  [
    'a kind with a writeOnly config (redacted)',
    resourceRow({
      urn: 'orn:steward:vault:p:v',
      kind: 'vault',
      configs: JSON.stringify({ user: 'u', password: SEALED }),
    }),
  ],
  [
    'a writeOnly config stored in plain text, with no secret key (redacted)',
    resourceRow({
      urn: 'orn:steward:vault:p:plain-text',
      kind: 'vault',
      configs: JSON.stringify({ user: 'u', password: PLAIN_SECRET }),
    }),
  ],
  [
    'a writeOnly output stored in plain text, with no secret key (redacted)',
    resourceRow({
      urn: 'orn:steward:keeper:p:plain-text',
      kind: 'keeper',
      configs: '{}',
      output: JSON.stringify({ token: PLAIN_SECRET, url: 'http://x' }),
    }),
  ],
  ['a waiting_on stored empty (no waiting_on shown)', resourceRow({ waiting_on: '' })],
  [
    'a sealed value under a kind that marks nothing writeOnly (redacted)',
    resourceRow({ configs: JSON.stringify({ size: 1, old: SEALED }) }),
  ],
  [
    'a sealed value in output, its $ escaped (redacted)',
    resourceRow({ output: `{"token":"\\u0024${SEALED.slice(1)}"}` }),
  ],
  [
    'a kind no module has (configs and output left out)',
    resourceRow({ urn: 'orn:steward:gone:p:g', kind: 'gone' }),
  ],
];
