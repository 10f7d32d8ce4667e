import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

import { loadConfig } from '../../src/config.js';
import { KIND_PATTERN, NAME_PATTERN } from '../../src/core/names.js';
import { FIXED_LIMITS, resolveLimits } from '../../src/core/requests/limits.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { expectError, type FakeSteward, startFakeSteward, urnOf } from '../helpers/fake-steward.js';
import { call, type JsonResponse } from '../helpers/harness.js';
import { openRawDatabase } from '../helpers/raw-database.js';

/**
 * Every limit on what a caller can make Steward store (issue 7): at the limit the
 * request is accepted, one over it is refused with the error JSON naming the limit
 * and its value, and the database is the same, row for row, after the refusal.
 * The configurable ones run at small settings, which also proves they are settings.
 */
const SETTINGS = {
  maxBodyBytes: 4096,
  maxLabels: 3,
  maxParamsBytes: 20,
  maxStateBytes: 2048,
  maxAttempts: 1,
};

describeEachDialect('limits', () => {
  let s: FakeSteward;
  const existing = urnOf('existing');
  beforeAll(async () => {
    s = await startFakeSteward({ config: SETTINGS, kinds: [{ kind: `k${'a'.repeat(62)}` }] });
    expect((await s.create('existing', { value: 0 }, { labels: { team: 'a' } })).status).toBe(202);
    await s.drain();
  });
  afterAll(() => s.close());

  /** Every row of every table, read beside Steward's own connection. */
  const database = async () => {
    const raw = await openRawDatabase(s.h.steward.config.db);
    try {
      // A refusal writes its audit entry (in a batch, maybe after the answer): the audit log is the one table it adds to.
      const tables = (await raw.tables()).filter((name) => name !== 'audit_log');
      const rowsOf = async (name: string) =>
        (await raw.rows(name)).filter(
          (row) => !(name === 'sqlite_sequence' && row.name === 'audit_log'),
        );
      return Object.fromEntries(
        await Promise.all(tables.map(async (name) => [name, await rowsOf(name)] as const)),
      );
    } finally {
      await raw.close();
    }
  };
  /** Sends the request and asserts it changed nothing in the database. */
  const refused = async (send: () => Promise<JsonResponse>) => {
    const before = await database();
    expect(Object.keys(before)).toEqual(
      expect.arrayContaining(['resources', 'operations', 'revisions', 'events', 'resource_labels']),
    );
    const res = await send();
    expect(await database()).toEqual(before);
    return res;
  };
  const expectLimit = (
    res: JsonResponse,
    problem: { path: string; limit: string; max: number },
    mentions: RegExp,
  ) => {
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.details.problems).toEqual([expect.objectContaining(problem)]);
    expect(res.body.error.message).toMatch(mentions);
  };
  const create = (name: string, more: Record<string, unknown> = {}) =>
    call('POST', `${s.api}/resources`, { kind: 'fake', project: 'p', name, ...more });

  it('reads each configurable limit from its setting, with the documented defaults', () => {
    expect(resolveLimits(loadConfig({}))).toEqual({
      ...FIXED_LIMITS,
      bodyBytes: 1024 * 1024,
      labels: 64,
      paramsBytes: 64 * 1024,
      stateBytes: 1024 * 1024,
    });
    expect(FIXED_LIMITS).toMatchObject({
      pageSizeDefault: 50,
      pageSizeMax: 500,
      nameChars: 63,
      labelKeyChars: 63,
      labelValueChars: 255,
    });
    const env = {
      STEWARD_MAX_BODY_BYTES: '2048',
      STEWARD_MAX_LABELS: '0',
      STEWARD_MAX_PARAMS_BYTES: '100',
      STEWARD_MAX_STATE_BYTES: '4096',
    };
    expect(resolveLimits(loadConfig(env))).toMatchObject({
      bodyBytes: 2048,
      labels: 0,
      paramsBytes: 100,
      stateBytes: 4096,
    });
    expect(() =>
      loadConfig({
        STEWARD_MAX_BODY_BYTES: '10',
        STEWARD_MAX_LABELS: '-1',
        STEWARD_MAX_PARAMS_BYTES: 'lots',
      }),
    ).toThrow(
      /STEWARD_MAX_BODY_BYTES="10"[\s\S]*STEWARD_MAX_LABELS="-1"[\s\S]*STEWARD_MAX_PARAMS_BYTES="lots"/,
    );
  });

  describe('request body (STEWARD_MAX_BODY_BYTES)', () => {
    /** A create body of exactly `bytes` bytes. */
    const bodyOf = (name: string, bytes: number) => {
      const empty = JSON.stringify({
        kind: 'fake',
        project: 'p',
        name,
        spec: { configs: { value: '' } },
      });
      const text = JSON.stringify({
        kind: 'fake',
        project: 'p',
        name,
        spec: { configs: { value: 'x'.repeat(bytes - empty.length) } },
      });
      expect(Buffer.byteLength(text)).toBe(bytes);
      return text;
    };
    const tooLarge = (res: JsonResponse) => {
      expectError(res, 413, 'payload_too_large');
      expect(res.body.error.message).toMatch(
        /larger than the 4096 bytes allowed \(STEWARD_MAX_BODY_BYTES\)/,
      );
      expect(res.body.error.details).toEqual({ limit: 'STEWARD_MAX_BODY_BYTES', max: 4096 });
    };

    it('takes a body of exactly the limit and refuses one byte more with 413, storing nothing', async () => {
      expect((await call('POST', `${s.api}/resources`, bodyOf('at-body-limit', 4096))).status).toBe(
        202,
      );
      const res = await refused(() =>
        call('POST', `${s.api}/resources`, bodyOf('over-body-limit', 4097)),
      );
      tooLarge(res);
      expect(res.body.error.message).toContain('(4097 bytes)');
      expect((await s.get(urnOf('over-body-limit'))).status).toBe(404);
    });

    it('counts a body sent without a length, and a compressed body as it inflates', async () => {
      const chunked = () => {
        const bytes = new TextEncoder().encode(bodyOf('chunked', 4097));
        const stream = new ReadableStream({
          start(controller) {
            controller.enqueue(bytes.slice(0, 2000));
            controller.enqueue(bytes.slice(2000));
            controller.close();
          },
        });
        return fetch(`${s.api}/resources`, {
          method: 'POST',
          body: stream,
          headers: { 'content-type': 'application/json' },
          duplex: 'half',
        } as RequestInit);
      };
      const asJson = async (res: Response): Promise<JsonResponse> => ({
        status: res.status,
        headers: res.headers,
        body: await res.json(),
      });
      tooLarge(await refused(async () => asJson(await chunked())));
      const gzip = (text: string) =>
        fetch(`${s.api}/resources`, {
          method: 'POST',
          body: gzipSync(text),
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        });
      const zipped = bodyOf('zipped-over', 4097);
      expect(gzipSync(zipped).length).toBeLessThan(4096 / 4);
      tooLarge(await refused(async () => asJson(await gzip(zipped))));
      expect((await gzip(bodyOf('zipped-at', 4096))).status).toBe(202);
    });
  });

  it('takes page_size 500 and refuses 501 with 400 naming the bound (docs/design.md §8 "at most 500": refused, not capped)', async () => {
    const at = await call('GET', `${s.api}/resources?page_size=500`);
    expect(at.status).toBe(200);
    expect(at.body.resources.length).toBeGreaterThan(0);
    expect((await call('GET', `${s.api}/operations?page_size=500`)).status).toBe(200);
    for (const path of [
      '/resources?page_size=501',
      '/operations?page_size=501',
      `/resources/${existing}/revisions?page_size=501`,
    ]) {
      const over = await call('GET', `${s.api}${path}`);
      expectError(over, 400, 'invalid_request');
      expect(over.body.error.message).toBe('page_size must be a whole number from 1 to 500');
      expect(over.body.error.details).toEqual({ limit: 'page_size', max: 500 });
    }
  });

  describe('labels', () => {
    const labels = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`l${i}`, 'v']));
    const countProblem = { path: '/labels', limit: 'STEWARD_MAX_LABELS', max: 3 };

    it('takes STEWARD_MAX_LABELS labels and refuses one more on create (both forms) and PATCH', async () => {
      expect((await create('three-labels', { labels: labels(3) })).status).toBe(202);
      const mentions = /has 4 labels, more than the 3 allowed \(STEWARD_MAX_LABELS\)/;
      expectLimit(
        await refused(() => create('four-labels', { labels: labels(4) })),
        countProblem,
        mentions,
      );
      const flat = { kind: 'fake', parent: 'p', name: 'four-flat', labels: labels(4), configs: {} };
      expectLimit(
        await refused(() => call('POST', `${s.api}/resources`, flat)),
        countProblem,
        mentions,
      );
      expect(
        (await call('PATCH', `${s.api}/resources/${existing}?dry_run=true`, { labels: labels(3) }))
          .status,
      ).toBe(200);
      expectLimit(
        await refused(() => call('PATCH', `${s.api}/resources/${existing}`, { labels: labels(4) })),
        countProblem,
        mentions,
      );
      expectLimit(
        await refused(() =>
          call('PATCH', `${s.api}/resources/${existing}?dry_run=true`, { labels: labels(4) }),
        ),
        countProblem,
        mentions,
      );
    });

    it('takes a key of 63 characters and a value of 255, and refuses 64 and 256', async () => {
      const key63 = 'k'.repeat(63);
      const value255 = `${'v'.repeat(254)}é`; // characters, not bytes: é is two bytes of UTF-8
      expect((await create('long-label', { labels: { [key63]: value255 } })).status).toBe(202);
      expect((await s.get(urnOf('long-label'))).body.labels).toEqual({ [key63]: value255 });
      const key64 = 'k'.repeat(64);
      expectLimit(
        await refused(() => create('long-key', { labels: { [key64]: 'v' } })),
        { path: `/labels/${key64}`, limit: 'label_key_chars', max: 63 },
        /key is 64 characters, more than the 63 a label key may have/,
      );
      expectLimit(
        await refused(() =>
          call('PATCH', `${s.api}/resources/${existing}`, { labels: { team: 'v'.repeat(256) } }),
        ),
        { path: '/labels/team', limit: 'label_value_chars', max: 255 },
        /value is 256 characters, more than the 255 a label value may have/,
      );
      // A key with a "/" is located by a JSON pointer that escapes it.
      const slashed = `a/${'b'.repeat(63)}`;
      const res = await refused(() => create('slashed-key', { labels: { [slashed]: 'v' } }));
      expect(res.body.error.details.problems[0].path).toBe(`/labels/a~1${'b'.repeat(63)}`);
    });
  });

  describe('names (docs/design.md §3: at most 63 characters)', () => {
    const tooLong = (res: JsonResponse, path: string) => {
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details.problems).toEqual(
        expect.arrayContaining([{ path, message: 'must NOT have more than 63 characters' }]),
      );
    };

    it('takes a name, project and kind of 63 characters and refuses 64', async () => {
      const n63 = 'n'.repeat(63);
      const kind63 = `k${'a'.repeat(62)}`;
      expect(
        (await call('POST', `${s.api}/resources`, { kind: kind63, project: n63, name: n63 }))
          .status,
      ).toBe(202);
      expect((await s.get(urnOf(n63, kind63, n63))).status).toBe(200);
      tooLong(await refused(() => create('n'.repeat(64))), '/name');
      tooLong(await refused(() => create('n', { project: 'p'.repeat(64) })), '/project');
      tooLong(
        await refused(() =>
          call('POST', `${s.api}/resources`, {
            kind: `k${'a'.repeat(63)}`,
            project: 'p',
            name: 'n',
          }),
        ),
        '/kind',
      );
      tooLong(
        await refused(() =>
          call('POST', `${s.api}/resources`, {
            kind: 'fake',
            parent: 'p'.repeat(64),
            name: 'n',
            configs: {},
          }),
        ),
        '/parent',
      );
    });

    it('says why a URN with a name over 63 characters does not parse', async () => {
      const res = await refused(() =>
        call('PATCH', `${s.api}/resources/${urnOf('n'.repeat(64))}`, { labels: {} }),
      );
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.message).toMatch(/its name is longer than 63 characters$/);
    });

    it('agrees with the schemas the API publishes', () => {
      const common = JSON.parse(
        readFileSync(join(process.cwd(), 'schemas', 'common.json'), 'utf8'),
      );
      expect(common.definitions.name.maxLength).toBe(FIXED_LIMITS.nameChars);
      expect(common.definitions.kind.maxLength).toBe(FIXED_LIMITS.nameChars);
      expect(NAME_PATTERN.test('a'.repeat(FIXED_LIMITS.nameChars))).toBe(true);
      expect(NAME_PATTERN.test('a'.repeat(FIXED_LIMITS.nameChars + 1))).toBe(false);
      expect(KIND_PATTERN.test('a'.repeat(FIXED_LIMITS.nameChars))).toBe(true);
      expect(KIND_PATTERN.test('a'.repeat(FIXED_LIMITS.nameChars + 1))).toBe(false);
    });
  });

  it('takes action params of exactly STEWARD_MAX_PARAMS_BYTES and refuses one byte more, by either route', async () => {
    const at = { by: 1234567890123 }; // {"by":1234567890123} is 20 bytes
    const over = { by: 12345678901234 };
    expect(JSON.stringify(at).length).toBe(20);
    expect((await call('POST', `${s.api}/resources/${existing}/actions/bump`, at)).status).toBe(
      202,
    );
    await s.drain();
    expect((await s.get(existing)).body.spec.configs.value).toBe(1234567890123);
    const problem = { path: '/params', limit: 'STEWARD_MAX_PARAMS_BYTES', max: 20 };
    const mentions =
      /^action bump is over a limit: \/params is 21 bytes of JSON, more than the 20 allowed \(STEWARD_MAX_PARAMS_BYTES\)$/;
    expectLimit(
      await refused(() => call('POST', `${s.api}/resources/${existing}/actions/bump`, over)),
      problem,
      mentions,
    );
    expectLimit(
      await refused(() =>
        call('POST', `${s.api}/resources/${existing}/execute`, { action: 'bump', params: over }),
      ),
      problem,
      mentions,
    );
    expect(
      (
        await call('POST', `${s.api}/resources/${existing}/execute?dry_run=true`, {
          action: 'bump',
          params: at,
        })
      ).status,
    ).toBe(200);
  });

  describe('sync outputs (STEWARD_MAX_STATE_BYTES)', () => {
    /** output {"blob": "aaa…"} and no data: the JSON of both is n + 11 + 4 ("null") characters. */
    const resultOf = (n: number) => ({ status: 'COMPLETED', output: { blob: 'a'.repeat(n) } });

    it('stores a result of exactly the limit', async () => {
      const urn = urnOf('state-at-limit');
      s.next(urn, { type: 'invalid', value: resultOf(2048 - 15) });
      expect((await create('state-at-limit')).status).toBe(202);
      await s.drain();
      const resource = (await s.get(urn)).body;
      expect(resource.state).toMatchObject({
        status: 'COMPLETED',
        output: { blob: 'a'.repeat(2033) },
      });
    });

    it('refuses one character more: the resource ends in ERROR with a readable last_error, and the output is not stored', async () => {
      const urn = urnOf('state-over-limit');
      s.next(urn, { type: 'invalid', value: resultOf(2048 - 14) });
      expect((await create('state-over-limit')).status).toBe(202);
      await s.drain();
      const resource = (await s.get(urn)).body;
      expect(resource.state.status).toBe('ERROR');
      expect(resource.state.sync.last_error).toBe(
        'sync of kind fake returned an invalid SyncResult: output and data are 2049 bytes of JSON, more than the 2048 allowed (STEWARD_MAX_STATE_BYTES) (gave up after 1 attempt)',
      );
      expect(resource.state.output).not.toHaveProperty('blob');
      const stored = JSON.stringify(await database());
      expect(stored).toContain('a'.repeat(2033));
      expect(stored).not.toContain('a'.repeat(2034));
    });

    it('counts UTF-8 bytes, not characters: 1017 two-byte characters are 2049 bytes', async () => {
      const urn = urnOf('state-multibyte');
      // {"blob":"éé…"} + "null": 15 bytes around 1017 × 2 bytes = 2049, though only 1032 characters.
      s.next(urn, {
        type: 'invalid',
        value: { status: 'COMPLETED', output: { blob: 'é'.repeat(1017) } },
      });
      expect((await create('state-multibyte')).status).toBe(202);
      await s.drain();
      const resource = (await s.get(urn)).body;
      expect(resource.state.status).toBe('ERROR');
      expect(resource.state.sync.last_error).toContain(
        'output and data are 2049 bytes of JSON, more than the 2048 allowed',
      );
    });
  });
});
