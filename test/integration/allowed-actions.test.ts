import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describeEachDialect } from '../helpers/dialects.js';
import { gadget } from '../helpers/gadget-module.js';
import { call, type Harness, startSteward } from '../helpers/harness.js';
import { writeTestTokens } from '../helpers/test-tokens.js';

/**
 * `allowed_actions` and `OPTIONS /resources/{urn}` (docs/api.md#allowed-actions) against a
 * real Steward with a tokens file, on each database: what the status allows, for the caller.
 */

const GRANTS = {
  'editor-a': { role: 'editor', projects: ['a'] },
  'viewer-a': { role: 'viewer', projects: ['a'] },
  'editor-b': { role: 'editor', projects: ['b'] },
} as const;
type TokenName = keyof typeof GRANTS;
let secrets: Record<TokenName, string>;
const URN = 'orn:steward:gadget:a:thing';

describeEachDialect('allowed_actions and OPTIONS', () => {
  let h: Harness;
  let dir: string;
  const as = (who: TokenName, method: string, path: string, body?: unknown) =>
    call(method, `${h.api}${path}`, body, { authorization: `Bearer ${secrets[who]}` });
  const actionsOf = async (who: TokenName) => {
    const one = await as(who, 'GET', `/resources/${URN}`);
    const list = await as(who, 'GET', '/resources?project=a');
    expect(one.status).toBe(200);
    expect(list.body.resources.map((r: any) => r.allowed_actions)).toEqual([
      one.body.allowed_actions,
    ]);
    return one.body.allowed_actions as string[];
  };
  const allowOf = async (who: TokenName) => {
    const res = await as(who, 'OPTIONS', `/resources/${URN}`);
    expect(res.status).toBe(200);
    return { allow: res.headers.get('allow'), actions: res.body.allowed_actions };
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-allowed-'));
    const written = writeTestTokens(dir, GRANTS);
    secrets = written.secrets;
    const { tokensFile } = written;
    h = await startSteward({
      dir,
      config: { worker: false, rateLimitPerSecond: 0, tokensFile },
      overrides: { extraModules: [{ definition: gadget, origin: 'test' }] },
    });
    const created = await as('editor-a', 'POST', '/resources', {
      kind: 'gadget',
      project: 'a',
      name: 'thing',
      spec: { configs: {} },
    });
    expect(created.status).toBe(202);
  });
  afterAll(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('follows the status for an editor, and is empty for a viewer', async () => {
    // PENDING: its create may be cancelled, the resource deleted, let go or paused; nothing that plans.
    expect(await actionsOf('editor-a')).toEqual(['delete', 'orphan', 'cancel', 'pause']);
    expect(await allowOf('editor-a')).toEqual({
      allow: 'GET, HEAD, OPTIONS, DELETE',
      actions: ['delete', 'orphan', 'cancel', 'pause'],
    });
    expect(await actionsOf('viewer-a')).toEqual([]);

    await h.steward.engine.drain();
    // COMPLETED: update, delete, the module's action poke (gadget has no observe: no refresh).
    const completed = ['update', 'delete', 'orphan', 'pause', 'poke'];
    expect(await actionsOf('editor-a')).toEqual(completed);
    expect(await allowOf('editor-a')).toEqual({
      allow: 'GET, HEAD, OPTIONS, PUT, PATCH, DELETE',
      actions: completed,
    });
    expect(await actionsOf('viewer-a')).toEqual([]);
    expect(await allowOf('viewer-a')).toEqual({ allow: 'GET, HEAD, OPTIONS', actions: [] });

    expect((await as('editor-a', 'POST', `/resources/${URN}/pause`)).status).toBe(200);
    expect(await actionsOf('editor-a')).toEqual(['update', 'delete', 'orphan', 'resume', 'poke']);
    expect((await as('editor-a', 'POST', `/resources/${URN}/resume`)).status).toBe(200);
  });

  it('answers OPTIONS for a resource of another project as for a missing one, and a bad URN with 400', async () => {
    const hidden = await as('editor-b', 'OPTIONS', `/resources/${URN}`);
    const missing = await as('editor-b', 'OPTIONS', '/resources/orn:steward:gadget:b:nothing');
    expect(hidden.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(hidden.body.error.code).toBe(missing.body.error.code);
    expect((await as('editor-a', 'OPTIONS', '/resources/not-a-urn')).status).toBe(400);
    expect((await call('OPTIONS', `${h.api}/resources/${URN}`)).status).toBe(401);
  });
});
