import fc from 'fast-check';

import type { Endpoint, RawRequest } from './http.js';
import {
  BAD_SCHEDULE_BODIES,
  ODD_SCHEDULE_BODIES,
  VALID_SCHEDULE_BODIES,
} from './schedule-bodies.js';
import {
  bodyText,
  deepValue,
  edgyKey,
  edgyValue,
  headerSafe,
  nameLike,
  pageTokenOf,
  rawEncode,
  sendable,
  STRANGE_STRINGS,
  wirePiece,
  wireUrn,
} from './values.js';

/** What the fuzzer knows of the running Steward: what it seeded and what the registry holds. */
export interface FuzzWorld {
  urns: string[];
  operationIds: string[];
  /** The seeded schedules' ids, and others made since. */
  scheduleIds: string[];
  kinds: string[];
  actions: string[];
}

/** A request to one endpoint; `method` may differ from the endpoint's when the fuzzer tries another. */
export interface FuzzRequest extends RawRequest {
  endpoint: Endpoint;
}

/** The valid bodies each endpoint starts from before it is mutated (by `METHOD template`, without the prefix). */
/** Webhooks (issue 16): 127.0.0.1 is in the fuzz Steward's STEWARD_WEBHOOK_ALLOW (steward.ts); nothing is sent (no worker). */
export const VALID_WEBHOOK_BODIES = [
  { url: 'http://127.0.0.1:9/hook', events: ['*'], secret: 'a-secret-of-sixteen-chars' },
  {
    url: 'https://127.0.0.1/steward?x=1',
    events: ['resource.status_changed', 'operation.succeeded'],
    project: 'p',
    secret: 'another-secret-0123456789',
  },
];

function validBodies(endpoint: Endpoint): unknown[] {
  const key = `${endpoint.method} ${endpoint.template.replace(/^\/api\/v1beta1/, '')}`;
  const bodies: Record<string, unknown[]> = {
    'POST /resources': [
      {
        kind: 'fake',
        project: 'p',
        name: 'fresh',
        labels: { team: 'a' },
        spec: { configs: { value: 1 }, dependencies: {} },
      },
      { kind: 'fake', parent: 'p', name: 'fresh-flat', configs: { value: 2 }, labels: {} },
      { kind: 'chatty', project: 'p', name: 'fresh-chatty', spec: { configs: {} } },
      // Day 2 (issue 13): an import, and a policy in either form.
      {
        kind: 'fake',
        project: 'p',
        name: 'fresh-import',
        import: true,
        spec: { configs: { value: 1 }, policy: { mode: 'observe', on_delete: 'orphan' } },
      },
      { kind: 'fake', parent: 'p', name: 'fresh-policy', policy: { on_delete: 'orphan' } },
      { kind: 'chatty', project: 'p', name: 'fresh-chatty-import', import: true },
    ],
    'PATCH /resources/{urn}': [
      { configs: { value: 3 } },
      { labels: { team: 'b' } },
      { spec: { configs: { steps: 2 }, dependencies: {} } },
      { dependencies: {} },
      { policy: { mode: 'observe' } },
      { policy: { mode: 'manage', on_delete: 'orphan' } },
    ],
    // Apply (issue 16): a seed as it was made (200, nothing written), changed (an update), and flat.
    'PUT /resources/{urn}': (['existing', 'waiting', 'broken', 'held'] as const).flatMap((name) => [
      {
        kind: 'fake',
        project: 'p',
        name,
        labels: { team: 'a', tier: name },
        spec: { configs: { value: 1 } },
      },
      { kind: 'fake', parent: 'p', name, configs: { value: 2, steps: 1 } },
    ]),
    'POST /resources/{urn}/execute': [{ action: 'bump', params: { by: 1 } }, { action: 'poke' }],
    'POST /resources/{urn}/actions/{action}': [{ by: 1 }, {}],
    'POST /resources/{urn}/schedules': VALID_SCHEDULE_BODIES,
    'POST /webhooks': VALID_WEBHOOK_BODIES,
  };
  return bodies[key] ?? [{}];
}

/** Near misses of the day-2 fields the mutations would seldom hit: wrong types, unknown keys, bad modes. */
function badBodies(endpoint: Endpoint): unknown[] {
  const key = `${endpoint.method} ${endpoint.template.replace(/^\/api\/v1beta1/, '')}`;
  const policies: unknown[] = [
    { mode: 'watch' },
    { on_delete: 'keep' },
    { mode: 'observe', extra: true },
    { mode: null },
    { on_delete: ['orphan'] },
    'observe',
    [],
    null,
  ];
  const bodies: Record<string, unknown[]> = {
    'POST /resources': [
      ...policies.map((policy) => ({
        kind: 'fake',
        project: 'p',
        name: 'bad-policy',
        spec: { configs: {}, policy },
      })),
      ...policies.map((policy) => ({ kind: 'fake', parent: 'p', name: 'bad-flat', policy })),
      ...[1, 'true', null, {}, false].map((flag) => ({
        kind: 'fake',
        project: 'p',
        name: 'bad-import',
        import: flag,
      })),
      { kind: 'fake', project: 'p', name: 'bad-place', spec: { configs: {}, import: true } },
      { kind: 'fake', project: 'p', name: 'existing', import: true },
    ],
    'PATCH /resources/{urn}': [
      ...policies.map((policy) => ({ policy })),
      ...policies.map((policy) => ({ spec: { policy } })),
      { import: true },
      { paused: true },
    ],
    'POST /resources/{urn}/schedules': [...BAD_SCHEDULE_BODIES, ...ODD_SCHEDULE_BODIES],
  };
  return bodies[key] ?? [];
}

interface Mutation {
  op: 'set' | 'add' | 'delete';
  at: number;
  which: number;
  key: string;
  value: unknown;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  op: fc.constantFrom('set', 'add', 'delete'),
  at: fc.nat(),
  which: fc.nat(),
  key: edgyKey,
  value: edgyValue,
});

/** Applies each mutation to a container of a fresh copy: replace a member, add one (own `__proto__` too), or remove one. */
function mutate(base: unknown, mutations: Mutation[]): unknown {
  const root = { body: structuredClone(base) } as Record<string, unknown>;
  for (const m of mutations) {
    const containers: Array<Record<string, unknown>> = [];
    const walk = (node: unknown) => {
      if (typeof node !== 'object' || node === null) return;
      containers.push(node as Record<string, unknown>);
      for (const child of Object.values(node)) walk(child);
    };
    walk(root);
    const node = containers[m.at % containers.length]!;
    const keys = Object.keys(node);
    const existing = keys[m.which % Math.max(keys.length, 1)];
    // A copy: fast-check hands out the same constant objects again, and a later mutation may add to this one.
    const value = structuredClone(m.value);
    if (m.op === 'add' || existing === undefined)
      Object.defineProperty(node, m.key, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else if (m.op === 'set') node[existing] = value;
    else if (node !== root) delete node[existing];
  }
  return root.body;
}

/** Body text: mutated valid bodies mostly, any JSON value, junk text, nothing, or one over the 1 MiB limit. */
function bodyFor(endpoint: Endpoint): fc.Arbitrary<string | undefined> {
  const nearValid = fc
    .tuple(
      fc.constantFrom(...validBodies(endpoint)),
      fc.oneof(fc.constant<Mutation[]>([]), fc.array(mutation, { minLength: 1, maxLength: 3 })),
    )
    .map(([base, ms]) => bodyText(mutate(base, ms)));
  const junk = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.constantFrom(
      '',
      ' ',
      'null',
      '{',
      '{"kind":',
      '[1,',
      '{"a":1,"a":2}',
      '\ufeff{}',
      '{}{}',
      '{"__proto__":{"x":1}}',
      '{"constructor":{"prototype":{}}}',
      'NaN',
      '1e999',
      '"\\ud800"',
      '{"a":"\\u0000"}',
    ),
    fc.tuple(fc.constantFrom(...validBodies(endpoint)), fc.nat()).map(([base, cut]) => {
      const text = JSON.stringify(base);
      return text.slice(0, cut % text.length);
    }),
  );
  const bad = badBodies(endpoint);
  const some = fc.oneof(
    { weight: 6, arbitrary: nearValid },
    ...(bad.length
      ? [{ weight: 2, arbitrary: fc.constantFrom(...bad).map((body) => bodyText(body)) }]
      : []),
    { weight: 2, arbitrary: fc.jsonValue().map((value) => bodyText(value)) },
    { weight: 1, arbitrary: deepValue.map((value) => bodyText(value)) },
    { weight: 2, arbitrary: junk },
    {
      weight: 1,
      arbitrary: fc.constant(undefined).map(() => bodyText({ value: 'x'.repeat(1024 * 1024 + 1) })),
    },
  );
  return fc.oneof(
    { weight: endpoint.body ? 1 : 8, arbitrary: fc.constant(undefined) },
    { weight: 6, arbitrary: some },
  );
}

/** One query parameter's value, by name. */
function queryValue(name: string, world: FuzzWorld): fc.Arbitrary<string> {
  const junk = fc.oneof(
    fc.string({ maxLength: 12 }),
    wirePiece,
    fc.constantFrom(...STRANGE_STRINGS),
  );
  const number = fc.oneof(
    fc.integer({ min: -5, max: 1000 }).map(String),
    fc.constantFrom(
      '',
      '0',
      '2.5',
      '1e2',
      '0x10',
      ' 5',
      '00050',
      '500',
      '501',
      '999999999999999',
      '99999999999999999999',
      '-0',
      'NaN',
    ),
  );
  // The audit log's bounds (GET /audit): RFC 3339 times, and near misses.
  const time = fc.constantFrom(
    '2026-01-01T00:00:00Z',
    '2099-12-31T23:59:59.999+01:00',
    '2026-01-01',
    '2026-13-45T99:00:00Z',
    'yesterday',
    '',
  );
  const byName: Record<string, fc.Arbitrary<string>> = {
    page_size: number,
    tail: number,
    since: fc.oneof(number, time),
    until: time,
    action: fc.constantFrom(
      'POST',
      'PATCH',
      'resource.create',
      'operation.cancel',
      'poke',
      'post',
      '',
    ),
    actor: fc.oneof(fc.constantFrom('anonymous', 'unknown', ''), nameLike),
    page_token: pageTokenOf(world.urns),
    labels: fc
      .array(
        fc.tuple(
          fc.oneof(fc.constantFrom('team', 'tier', ''), fc.string({ maxLength: 6 })),
          fc.oneof(fc.constantFrom('a', 'b', ''), fc.string({ maxLength: 6 })),
          fc.constantFrom('=', '==', '', ':'),
        ),
        { maxLength: 4 },
      )
      .map((pairs) => pairs.map(([k, v, eq]) => `${k}${eq}${v}`).join(',')),
    status: fc.constantFrom(
      'PENDING',
      'COMPLETED',
      'ERROR',
      'queued',
      'running',
      'succeeded',
      'failed',
      'cancelled',
      'pending',
      'DONE',
      '',
    ),
    dry_run: fc.constantFrom('true', 'false', '', 'TRUE', '1', 'yes'),
    orphan: fc.constantFrom('true', 'false', '', 'TRUE', '1', 'yes'),
    cascade: fc.constantFrom('true', 'false', '', 'TRUE', '1', 'yes'),
    paused: fc.constantFrom('true', 'false', '', 'TRUE', '1', 'no'),
    follow: fc.constantFrom('true', 'false', '', '1'),
    urn: wireUrn(world.urns, world.kinds),
    kind: fc.oneof(fc.constantFrom(...world.kinds), nameLike),
    project: nameLike,
  };
  return fc.oneof(
    { weight: 4, arbitrary: Object.hasOwn(byName, name) ? byName[name]! : junk },
    { weight: 1, arbitrary: junk },
  );
}

/** `?k=v&…` with the endpoint's own parameters mostly, others and junk keys besides; repeated keys and keys without `=` too. */
function queryFor(endpoint: Endpoint, world: FuzzWorld): fc.Arbitrary<string> {
  const known = [
    'page_size',
    'page_token',
    'labels',
    'status',
    'kind',
    'project',
    'urn',
    'dry_run',
    'follow',
    'tail',
    'since',
    'orphan',
    'cascade',
    'paused',
  ];
  const key = fc.oneof(
    {
      weight: 4,
      arbitrary: endpoint.query.length
        ? fc.constantFrom(...endpoint.query)
        : fc.constantFrom(...known),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        ...known,
        '__proto__',
        'constructor',
        'toString',
        'labels[]',
        'a[b]',
        '',
      ),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
  );
  const pair = key.chain((name) =>
    fc
      .tuple(
        fc.constant(name),
        queryValue(name, world),
        fc.constantFrom('encoded', 'raw', 'no-value'),
      )
      .map(([k, v, mode]) => {
        if (mode === 'no-value') return rawEncode(k);
        return mode === 'encoded'
          ? `${encodeURIComponent(k)}=${encodeURIComponent(v.replace(/[\ud800-\udfff]/g, '?'))}`
          : `${rawEncode(k)}=${rawEncode(v)}`;
      }),
  );
  const documented = endpoint.query.length
    ? fc
        .array(
          fc
            .constantFrom(...endpoint.query)
            .chain((name) =>
              queryValue(name, world).map(
                (value) => `${name}=${encodeURIComponent(value.replace(/[\ud800-\udfff]/g, '?'))}`,
              ),
            ),
          { minLength: 1, maxLength: 2 },
        )
        .map((pairs) => `?${pairs.join('&')}`)
    : fc.constant('');
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant('') },
    { weight: 2, arbitrary: documented },
    {
      weight: 3,
      arbitrary: fc
        .array(pair, { minLength: 1, maxLength: 4 })
        .map((pairs) => `?${pairs.join('&')}`),
    },
  );
}

function headersFor(endpoint: Endpoint, hasBody: boolean): fc.Arbitrary<Record<string, string>> {
  const junk = fc.oneof(fc.string({ maxLength: 20 }), fc.string({ unit: 'binary', maxLength: 10 }));
  const optional = (name: string, values: fc.Arbitrary<string>, weight: number) =>
    fc.oneof(
      { weight, arbitrary: values.map((value) => ({ [name]: headerSafe(value) })) },
      { weight: 8, arbitrary: fc.constant({}) },
    );
  const json = fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/merge-patch+json',
    'APPLICATION/JSON',
    'application/json;charset=UTF-8',
  );
  const contentType = fc.oneof(
    { weight: 14, arbitrary: json },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        '',
        'application/jsonx',
        'application/json; charset=latin1',
        'application/json; charset=utf-16',
        'application/json;',
        'json',
      ),
    },
    { weight: 1, arbitrary: junk },
  );
  return fc
    .tuple(
      hasBody
        ? fc.oneof(
            {
              weight: 15,
              arbitrary: contentType.map((value) => ({ 'content-type': headerSafe(value) })),
            },
            { weight: 1, arbitrary: fc.constant({}) },
          )
        : optional('content-type', contentType, 1),
      optional(
        'content-encoding',
        fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'zstd', 'x-junk', 'GZIP', ''),
        1,
      ),
      optional(
        'if-match',
        fc.oneof(
          fc.constantFrom(
            '*',
            '"1"',
            'W/"1"',
            '1',
            '"2"',
            '"999999999999999999"',
            '"-1"',
            '"1", "2"',
            '',
            'W/',
          ),
          junk,
        ),
        endpoint.headers.includes('if-match') ? 6 : 1,
      ),
      optional(
        'last-event-id',
        fc.oneof(
          fc.constantFrom(
            '0',
            '1',
            '-1',
            '',
            '999999999999999',
            '9999999999999999',
            '1.5',
            '1, 2',
            ' 3',
          ),
          fc.nat().map(String),
          junk,
        ),
        endpoint.headers.includes('last-event-id') ? 6 : 1,
      ),
      optional(
        'accept',
        fc.oneof(
          fc.constantFrom(
            'application/json',
            'text/event-stream',
            '*/*',
            'text/html',
            'application/x-ndjson',
          ),
          junk,
        ),
        1,
      ),
      optional('x-request-id', junk, 1),
      optional(
        'authorization',
        fc.oneof(
          fc.constantFrom('Bearer ', 'Bearer x', 'Basic YTpi', 'bearer ' + 'a'.repeat(2000)),
          junk,
        ),
        1,
      ),
    )
    .map((parts) => Object.assign({}, ...parts) as Record<string, string>);
}

/** Path parameters: the seeded values mostly, near-misses and wire-level junk besides. */
function pathFor(endpoint: Endpoint, world: FuzzWorld): fc.Arbitrary<string> {
  const names = [...endpoint.template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  // `{id}` is an operation's, or under /schedules a schedule's (and now and then the other kind's).
  const [ids, others] = endpoint.template.includes('/schedules/')
    ? [world.scheduleIds, world.operationIds]
    : [world.operationIds, world.scheduleIds];
  const values: Record<string, fc.Arbitrary<string>> = {
    urn: wireUrn(world.urns, world.kinds),
    id: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...ids) },
      { weight: 1, arbitrary: fc.constantFrom(...others) },
      {
        weight: 1,
        arbitrary: fc.constantFrom('op_', 'op_nope', 'OP_x', 'sch_', 'sch_nope', 'SCH_x'),
      },
      {
        weight: 2,
        arbitrary: fc.array(wirePiece, { minLength: 1, maxLength: 4 }).map((p) => p.join('')),
      },
    ),
    kind: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...world.kinds) },
      { weight: 2, arbitrary: nameLike.map(rawEncode) },
      { weight: 1, arbitrary: wirePiece },
    ),
    action: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...world.actions) },
      { weight: 2, arbitrary: nameLike.map(rawEncode) },
      { weight: 1, arbitrary: wirePiece },
    ),
  };
  return fc
    .tuple(...names.map((name) => values[name] ?? wirePiece))
    .map((filled) =>
      names.reduce((path, name, i) => path.replace(`{${name}}`, filled[i]!), endpoint.template),
    );
}

/** A request to `endpoint`: its own method mostly, sometimes another one. */
export function requestFor(endpoint: Endpoint, world: FuzzWorld): fc.Arbitrary<FuzzRequest> {
  const method = fc.oneof(
    { weight: 12, arbitrary: fc.constant(endpoint.method) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
    },
  );
  return fc
    .tuple(method, pathFor(endpoint, world), queryFor(endpoint, world), bodyFor(endpoint))
    .chain(([m, path, query, body]) =>
      headersFor(endpoint, body !== undefined).map((headers) =>
        describable({ endpoint, method: m, path: sendable(`${path}${query}`), headers, body }),
      ),
    );
}

const clip = (text: string, max: number) =>
  text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;

/** fast-check prints a failing request short: the method, path, headers and the start of the body. */
function describable(req: FuzzRequest): FuzzRequest {
  return Object.defineProperty(req, fc.toStringMethod, {
    value: () =>
      `${req.method} ${clip(req.path, 300)} headers=${JSON.stringify(req.headers)} body=${req.body === undefined ? 'none' : JSON.stringify(clip(String(req.body), 300))}`,
  });
}
