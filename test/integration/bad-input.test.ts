import { describeEachDialect } from '../helpers/dialects.js';
import { expectError, type FakeSteward, startFakeSteward, urnOf } from '../helpers/fake-steward.js';
import { call, type JsonResponse } from '../helpers/harness.js';

/**
 * Every malformed request gets a 4xx with `{"error": {"code", "message"}}` (never a
 * 500) and changes nothing: the resources, their operations and revisions are the
 * same before and after.
 */
describeEachDialect('bad input', () => {
  let s: FakeSteward;
  const existing = urnOf('existing');
  beforeAll(async () => {
    s = await startFakeSteward();
    expect((await s.create('existing', { value: 1 }, { labels: { team: 'a' } })).status).toBe(202);
    await s.drain();
  });
  afterAll(() => s.close());

  const snapshot = async () => ({
    resources: (await call('GET', `${s.api}/resources?page_size=500`)).body,
    operations: await s.operations(),
    revisions: (await call('GET', `${s.api}/resources/${existing}/revisions`)).body,
  });
  const create = (body: Record<string, unknown>) =>
    JSON.stringify({ kind: 'fake', project: 'p', name: 'n', ...body });

  interface Case {
    method: string;
    path: string;
    body?: string | object;
    headers?: Record<string, string>;
    status: number;
    code: string;
    check?: (res: JsonResponse) => void;
  }
  const problemsAt =
    (...paths: string[]) =>
    (res: JsonResponse) => {
      const found = res.body.error.details.problems.map((p: { path: string }) => p.path);
      for (const path of paths) expect(found).toContain(path);
    };
  const forbidden = (path: string) => (res: JsonResponse) => {
    expect(res.body.error.message).toBe(`the key at ${path} is not allowed in a request body`);
    expect(res.body.error.details).toEqual({ path });
  };
  const says = (pattern: RegExp) => (res: JsonResponse) =>
    expect(res.body.error.message).toMatch(pattern);
  const E = `/resources/${existing}`;

  const cases: Record<string, Case> = {
    'invalid JSON': {
      method: 'POST',
      path: '/resources',
      body: '{"kind": "fake",',
      status: 400,
      code: 'invalid_request',
      check: says(/not valid JSON/),
    },
    'a JSON scalar body': {
      method: 'POST',
      path: '/resources',
      body: '"fake"',
      status: 400,
      code: 'invalid_request',
    },
    'a JSON array body': {
      method: 'POST',
      path: '/resources',
      body: '[]',
      status: 400,
      code: 'invalid_request',
    },
    'an empty body': { method: 'POST', path: '/resources', status: 400, code: 'invalid_request' },
    'a name of the wrong type': {
      method: 'POST',
      path: '/resources',
      body: create({ name: 5 }),
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/name'),
    },
    'a label value of the wrong type': {
      method: 'POST',
      path: '/resources',
      body: create({ labels: { team: 5 } }),
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/labels/team'),
    },
    'configs that are not an object': {
      method: 'POST',
      path: '/resources',
      body: create({ spec: { configs: 'x' } }),
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/spec/configs'),
    },
    'a spec that is an array': {
      method: 'POST',
      path: '/resources',
      body: create({ spec: [] }),
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/spec'),
    },
    'a missing name': {
      method: 'POST',
      path: '/resources',
      body: { kind: 'fake', project: 'p' },
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/name'),
    },
    'an empty object': {
      method: 'POST',
      path: '/resources',
      body: {},
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/kind', '/project', '/name'),
    },
    'an unknown field': {
      method: 'POST',
      path: '/resources',
      body: create({ owner: 'me' }),
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/owner'),
    },
    'the flat form with both project and parent': {
      method: 'POST',
      path: '/resources',
      body: { kind: 'fake', project: 'p', parent: 'p', name: 'n', configs: {} },
      status: 400,
      code: 'invalid_request',
    },
    'an unknown kind': {
      method: 'POST',
      path: '/resources',
      body: create({ kind: 'nope' }),
      status: 400,
      code: 'invalid_request',
      check: (res) => {
        const known = s.h.steward.registry.kinds();
        expect(known).toEqual(expect.arrayContaining(['fake', 'file']));
        expect(res.body.error.message).toBe(
          `unknown kind "nope"; known kinds: ${known.join(', ')}`,
        );
        expect(res.body.error.details).toEqual({ known_kinds: known });
      },
    },
    'an upper-case kind': {
      method: 'POST',
      path: '/resources',
      body: create({ kind: 'Fake' }),
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/kind'),
    },
    'a name with a slash': {
      method: 'POST',
      path: '/resources',
      body: create({ name: 'a/b' }),
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/name'),
    },
    'a name of ..': {
      method: 'POST',
      path: '/resources',
      body: create({ name: '..' }),
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/name'),
    },
    'an upper-case name': {
      method: 'POST',
      path: '/resources',
      body: create({ name: 'Web' }),
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/name'),
    },
    'an upper-case project': {
      method: 'POST',
      path: '/resources',
      body: create({ project: 'P' }),
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/project'),
    },
    'a name with a colon': {
      method: 'POST',
      path: '/resources',
      body: create({ name: 'a:b' }),
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/name'),
    },
    'a name of 64 characters': {
      method: 'POST',
      path: '/resources',
      body: create({ name: 'a'.repeat(64) }),
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/name'),
    },
    'a flat parent with a slash': {
      method: 'POST',
      path: '/resources',
      body: { kind: 'fake', parent: '../etc', name: 'n', configs: {} },
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/parent'),
    },
    'a __proto__ key in configs': {
      method: 'POST',
      path: '/resources',
      body: '{"kind":"fake","project":"p","name":"n","spec":{"configs":{"__proto__":{"x":1}}}}',
      status: 400,
      code: 'invalid_request',
      check: forbidden('/spec/configs/__proto__'),
    },
    'a constructor key in configs': {
      method: 'POST',
      path: '/resources',
      body: '{"kind":"fake","project":"p","name":"n","spec":{"configs":{"constructor":{"prototype":{"x":1}}}}}',
      status: 400,
      code: 'invalid_request',
      check: forbidden('/spec/configs/constructor'),
    },
    'a __proto__ key in labels': {
      method: 'POST',
      path: '/resources',
      body: '{"kind":"fake","project":"p","name":"n","labels":{"__proto__":"x"}}',
      status: 400,
      code: 'invalid_request',
      check: forbidden('/labels/__proto__'),
    },
    'NUL in a label value (SQLite stored it, PostgreSQL refused it)': {
      method: 'POST',
      path: '/resources',
      body: '{"kind":"fake","project":"p","name":"nul","labels":{"team":"a\\u0000b"}}',
      status: 400,
      code: 'invalid_request',
      check: (res: JsonResponse) => {
        expect(res.body.error.message).toBe(
          'the text at /labels/team holds NUL (U+0000), which Steward does not store',
        );
        expect(res.body.error.details).toEqual({ path: '/labels/team' });
      },
    },
    'NUL in a key of configs, in a PATCH': {
      method: 'PATCH',
      path: E,
      body: '{"configs":{"a\\u0000b":1}}',
      status: 400,
      code: 'invalid_request',
      check: says(/^the text at \/configs\/a\\u0000b holds NUL \(U\+0000\)/),
    },
    'NUL deep in an array of an apply': {
      method: 'PUT',
      path: E,
      body: '{"kind":"fake","configs":{"list":["ok",["x\\u0000"]]}}',
      status: 400,
      code: 'invalid_request',
      check: says(/^the text at \/configs\/list\/1\/0 holds NUL/),
    },
    'a __proto__ key in a PATCH': {
      method: 'PATCH',
      path: E,
      body: '{"configs":{"__proto__":{"value":2}}}',
      status: 400,
      code: 'invalid_request',
      check: forbidden('/configs/__proto__'),
    },
    'a prototype key in action params': {
      method: 'POST',
      path: `${E}/actions/bump`,
      body: '{"by":1,"x":{"prototype":{}}}',
      status: 400,
      code: 'invalid_request',
      check: forbidden('/x/prototype'),
    },
    'a 2 MiB body': {
      method: 'POST',
      path: '/resources',
      body: create({ spec: { configs: { value: 'x'.repeat(2 * 1024 * 1024) } } }),
      status: 413,
      code: 'payload_too_large',
    },
    'a text/plain body': {
      method: 'POST',
      path: '/resources',
      body: create({}),
      headers: { 'content-type': 'text/plain' },
      status: 415,
      code: 'unsupported_media_type',
    },
    'a form body on PATCH': {
      method: 'PATCH',
      path: E,
      body: 'configs=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      status: 415,
      code: 'unsupported_media_type',
    },
    'configs that fail the module schema': {
      method: 'POST',
      path: '/resources',
      body: create({ spec: { configs: { steps: 0, colour: 'red' } } }),
      status: 400,
      code: 'invalid_request',
      check: (res) => {
        expect(res.body.error.details.problems).toEqual(
          expect.arrayContaining([
            { path: '/spec/configs/steps', message: 'must be >= 1' },
            { path: '/spec/configs/colour', message: 'must NOT have additional properties' },
          ]),
        );
        expect(res.body.error.message).toContain('/spec/configs/steps');
      },
    },
    'configs that fail the module schema on PATCH': {
      method: 'PATCH',
      path: E,
      body: { configs: { steps: 'three' } },
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/spec/configs/steps'),
    },
    'configs the plan refuses': {
      method: 'POST',
      path: '/resources',
      body: create({ spec: { configs: { value: 'reject' } } }),
      status: 400,
      code: 'invalid_request',
      check: says(/^value "reject" is refused by the fake module$/),
    },
    'configs the plan refuses on PATCH': {
      method: 'PATCH',
      path: E,
      body: { configs: { value: 'reject' } },
      status: 400,
      code: 'invalid_request',
      check: says(/^value "reject" is refused by the fake module$/),
    },
    'a create query parameter that does not exist': {
      method: 'POST',
      path: '/resources?force=true',
      body: create({}),
      status: 400,
      code: 'invalid_request',
      check: says(/unknown query parameter "force"/),
    },
    'a dry_run that is not a boolean': {
      method: 'POST',
      path: '/resources?dry_run=yes',
      body: create({}),
      status: 400,
      code: 'invalid_request',
    },
    'PATCH of the kind': {
      method: 'PATCH',
      path: E,
      body: { kind: 'file' },
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/kind'),
    },
    'PATCH of the name': {
      method: 'PATCH',
      path: E,
      body: { name: 'other' },
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/name'),
    },
    'PATCH with both spec and flat configs': {
      method: 'PATCH',
      path: E,
      body: { spec: { configs: {} }, configs: {} },
      status: 400,
      code: 'invalid_request',
    },
    'PATCH with no body': { method: 'PATCH', path: E, status: 400, code: 'invalid_request' },
    'PATCH with a stale If-Match': {
      method: 'PATCH',
      path: E,
      body: { configs: { value: 2 } },
      headers: { 'if-match': '"9"' },
      status: 412,
      code: 'precondition_failed',
    },
    'PATCH with an If-Match that names no version': {
      method: 'PATCH',
      path: E,
      body: { configs: { value: 2 } },
      headers: { 'if-match': '"abc"' },
      status: 400,
      code: 'invalid_request',
    },
    'an unknown action': {
      method: 'POST',
      path: `${E}/actions/explode`,
      body: {},
      status: 400,
      code: 'invalid_request',
      check: (res) => {
        expect(res.body.error.message).toBe(
          'kind fake has no action "explode"; its actions: bump, create, delete, update',
        );
        expect(res.body.error.details).toEqual({ actions: ['bump', 'create', 'delete', 'update'] });
      },
    },
    'an unknown action through execute': {
      method: 'POST',
      path: `${E}/execute`,
      body: { action: 'explode' },
      status: 400,
      code: 'invalid_request',
      check: says(/has no action "explode"/),
    },
    'create through execute': {
      method: 'POST',
      path: `${E}/execute`,
      body: { action: 'create' },
      status: 400,
      code: 'invalid_request',
      check: says(/use POST \/resources/),
    },
    'update through actions': {
      method: 'POST',
      path: `${E}/actions/update`,
      body: {},
      status: 400,
      code: 'invalid_request',
      check: says(/use PATCH/),
    },
    'execute without an action': {
      method: 'POST',
      path: `${E}/execute`,
      body: { params: { by: 1 } },
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/action'),
    },
    'execute with params that are not an object': {
      method: 'POST',
      path: `${E}/execute`,
      body: { action: 'bump', params: 5 },
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/params'),
    },
    'action params of the wrong type': {
      method: 'POST',
      path: `${E}/actions/bump`,
      body: { by: 'two' },
      status: 400,
      code: 'invalid_request',
      check: (res) =>
        expect(res.body.error.details.problems).toEqual([
          { path: '/params/by', message: 'must be integer' },
        ]),
    },
    'action params missing a field': {
      method: 'POST',
      path: `${E}/execute`,
      body: { action: 'bump', params: {} },
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/params/by'),
    },
    'action params with an unknown field': {
      method: 'POST',
      path: `${E}/actions/bump`,
      body: { by: 1, twice: true },
      status: 400,
      code: 'invalid_request',
      check: problemsAt('/params/twice'),
    },
    'action params that are an array': {
      method: 'POST',
      path: `${E}/actions/bump`,
      body: [1],
      status: 400,
      code: 'invalid_request',
    },
    'a URN that does not parse': {
      method: 'GET',
      path: '/resources/not-a-urn',
      status: 400,
      code: 'invalid_request',
      check: says(/is not a URN/),
    },
    'a URN with too few parts': {
      method: 'PATCH',
      path: '/resources/orn:steward:fake:p',
      body: { configs: {} },
      status: 400,
      code: 'invalid_request',
    },
    'a URN with too many parts': {
      method: 'DELETE',
      path: '/resources/orn:steward:fake:p:existing:x',
      status: 400,
      code: 'invalid_request',
    },
    'a URN with an upper-case name': {
      method: 'POST',
      path: '/resources/orn:steward:fake:p:Existing/retry',
      status: 400,
      code: 'invalid_request',
    },
    'a URN of another scheme': {
      method: 'GET',
      path: '/resources/urn:steward:fake:p:existing/revisions',
      status: 400,
      code: 'invalid_request',
    },
    'a path that is not percent-encoding': {
      method: 'GET',
      path: '/resources/%E0%A4%A',
      status: 400,
      code: 'invalid_request',
    },
    'a list query parameter that does not exist': {
      method: 'GET',
      path: '/resources?colour=red',
      status: 400,
      code: 'invalid_request',
      check: says(/unknown query parameter "colour"/),
    },
    'a GET query parameter that does not exist': {
      method: 'GET',
      path: `${E}?expand=all`,
      status: 400,
      code: 'invalid_request',
    },
    'a query parameter given twice': {
      method: 'GET',
      path: '/resources?kind=fake&kind=file',
      status: 400,
      code: 'invalid_request',
      check: says(/given once/),
    },
    'a bad page_token': {
      method: 'GET',
      path: '/resources?page_token=garbage',
      status: 400,
      code: 'invalid_request',
      check: says(/page_token/),
    },
    'a page_token of another listing': {
      method: 'GET',
      path: `/resources?page_token=${Buffer.from(JSON.stringify({ s: 'operations', a: 'op_x' })).toString('base64url')}`,
      status: 400,
      code: 'invalid_request',
    },
    'page_size 0': {
      method: 'GET',
      path: '/resources?page_size=0',
      status: 400,
      code: 'invalid_request',
      check: says(/page_size/),
    },
    'page_size 501': {
      method: 'GET',
      path: '/resources?page_size=501',
      status: 400,
      code: 'invalid_request',
      check: says(/page_size/),
    },
    'page_size -1': {
      method: 'GET',
      path: '/operations?page_size=-1',
      status: 400,
      code: 'invalid_request',
    },
    'page_size 2.5': {
      method: 'GET',
      path: '/resources?page_size=2.5',
      status: 400,
      code: 'invalid_request',
    },
    'a status filter that is no status': {
      method: 'GET',
      path: '/resources?status=DONE',
      status: 400,
      code: 'invalid_request',
    },
    'a label filter without a value': {
      method: 'GET',
      path: '/resources?labels=team',
      status: 400,
      code: 'invalid_request',
    },
    'an operation status filter that is no status': {
      method: 'GET',
      path: '/operations?status=DONE',
      status: 400,
      code: 'invalid_request',
    },
    'an operation URN filter that does not parse': {
      method: 'GET',
      path: '/operations?urn=nope',
      status: 400,
      code: 'invalid_request',
    },
    'an unknown route under the API': {
      method: 'GET',
      path: '/nope',
      status: 404,
      code: 'not_found',
    },
    'a method a resource does not have (405 with Allow)': {
      method: 'POST',
      path: E,
      body: { configs: {} },
      status: 405,
      code: 'method_not_allowed',
      check: (res) => expect(res.headers.get('allow')).toMatch(/\bGET\b.*\bPATCH\b/),
    },
    // express's router answered an OPTIONS of a path it routed by itself (200 with Allow); the API's
    // route table (route-table.ts) leaves it to the document's 405, which runs first.
    'an OPTIONS the document does not list': {
      method: 'OPTIONS',
      path: '/resources',
      status: 405,
      code: 'method_not_allowed',
      check: (res) => expect(res.headers.get('allow')).toBe('GET, POST, HEAD'),
    },
    'a method a path outside the prefix does not have': {
      method: 'DELETE',
      path: '/../../healthz',
      status: 405,
      code: 'method_not_allowed',
      check: (res) => expect(res.headers.get('allow')).toBe('GET, HEAD'),
    },
    'a project filter that is no project name': {
      method: 'GET',
      path: '/resources?project=Alpha',
      status: 400,
      code: 'invalid_request',
    },
    'a kind filter no module has': {
      method: 'GET',
      path: '/resources?kind=nope',
      status: 400,
      code: 'invalid_request',
    },
    'an empty kind filter': {
      method: 'GET',
      path: '/resources?kind=',
      status: 400,
      code: 'invalid_request',
    },
    'an empty project filter on schedules': {
      method: 'GET',
      path: '/schedules?project=',
      status: 400,
      code: 'invalid_request',
    },
    'an If-Match with one quote': {
      method: 'PATCH',
      path: E,
      body: { labels: {} },
      headers: { 'If-Match': '"1' },
      status: 400,
      code: 'invalid_request',
    },
    'a PUT (apply) body that is a PATCH body': {
      method: 'PUT',
      path: E,
      body: { configs: {} },
      status: 400,
      code: 'invalid_request',
    },
    'a PUT (apply) body that names another resource than its URN': {
      method: 'PUT',
      path: E,
      body: { kind: 'fake', project: 'p', name: 'other', spec: { configs: {} } },
      status: 400,
      code: 'invalid_request',
    },
    'an unknown sub-resource': {
      method: 'POST',
      path: `${E}/explode`,
      body: {},
      status: 404,
      code: 'not_found',
    },
    'a URN with a slash in the name': {
      method: 'PATCH',
      path: '/resources/orn:steward:fake:p:a/b',
      body: { configs: {} },
      status: 404,
      code: 'not_found',
    },
    'an unknown module': { method: 'GET', path: '/modules/nope', status: 404, code: 'not_found' },
    'an operation that does not exist': {
      method: 'GET',
      path: '/operations/op_nope',
      status: 404,
      code: 'not_found',
    },
    'a resource that does not exist': {
      method: 'POST',
      path: `/resources/${urnOf('ghost')}/actions/bump`,
      body: { by: 1 },
      status: 404,
      code: 'not_found',
    },
  };

  it.each(Object.entries(cases))('%s → 4xx JSON error, nothing changed', async (_what, c) => {
    const before = await snapshot();
    const res = await call(c.method, `${s.api}${c.path}`, c.body, c.headers);
    expectError(res, c.status, c.code);
    c.check?.(res);
    expect(await snapshot()).toEqual(before);
  });

  it('an unknown route outside the API prefix → 404 JSON', async () => {
    expectError(await call('GET', `${s.h.url}/nope`), 404, 'not_found');
    expectError(await call('POST', `${s.h.url}/api/v2/resources`, {}), 404, 'not_found');
  });

  it('the resource that every case aimed at is untouched', async () => {
    const res = await s.get(existing);
    expect(res.body).toMatchObject({
      version: 1,
      labels: { team: 'a' },
      spec: { configs: { value: 1 } },
      state: { status: 'COMPLETED' },
    });
    expect((await s.operations()).map((op) => op.action)).toEqual(['create']);
  });
});
