import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describeEachDialect } from '../helpers/dialects.js';
import { call, type Harness, startSteward } from '../helpers/harness.js';
import { writeTestTokens } from '../helpers/test-tokens.js';

/** GET /whoami: what the console reads to show only what the caller's role allows. */
describeEachDialect('whoami', () => {
  describe('open (no tokens file)', () => {
    let h: Harness;
    beforeAll(async () => (h = await startSteward({ config: { worker: false } })));
    afterAll(() => h.close());

    it('says Steward is open, and nothing else', async () => {
      const res = await call('GET', `${h.api}/whoami`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ open: true });
    });
  });

  describe('with tokens', () => {
    let h: Harness;
    let tokens: Record<'viewer-a' | 'admin' | 'editor-ab', string>;
    let dir: string;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'steward-whoami-'));
      const written = writeTestTokens(dir, {
        'viewer-a': { role: 'viewer', projects: ['a'] },
        admin: { role: 'admin', projects: ['*'] },
        'editor-ab': { role: 'editor', projects: ['a', 'b'] },
      });
      tokens = written.secrets;
      h = await startSteward({ dir, config: { worker: false, tokensFile: written.tokensFile } });
    });
    afterAll(async () => {
      await h.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const whoami = (token?: string) =>
      call('GET', `${h.api}/whoami`, undefined, token ? { authorization: `Bearer ${token}` } : {});

    it("answers each token's name, role and projects", async () => {
      expect((await whoami(tokens['viewer-a'])).body).toEqual({
        open: false,
        name: 'viewer-a',
        role: 'viewer',
        projects: ['a'],
      });
      expect((await whoami(tokens['editor-ab'])).body).toEqual({
        open: false,
        name: 'editor-ab',
        role: 'editor',
        projects: ['a', 'b'],
      });
      expect((await whoami(tokens.admin)).body).toEqual({
        open: false,
        name: 'admin',
        role: 'admin',
        projects: ['*'],
      });
    });

    it('answers 401 without a token or with an unknown one', async () => {
      expect((await whoami()).status).toBe(401);
      const unknown = await whoami('stw_not-a-token');
      expect(unknown.status).toBe(401);
      expect(unknown.body.error.code).toBe('unauthenticated');
    });
  });
});
