import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import express, { type ErrorRequestHandler } from 'express';
import request from 'supertest';

import { authenticate } from '../../src/api/auth/authenticate.js';
import { callerOf } from '../../src/api/auth/caller.js';
import {
  createTokenSource,
  type KnownToken,
  type TokenSource,
} from '../../src/api/auth/token-source.js';
import { hashToken, writeTokensFile } from '../../src/api/auth/tokens-file.js';
import { silentLogger } from '../../src/core/logging.js';

/**
 * src/api/auth/authenticate.ts remembers the tokens it found in force (verifiedTokens): what it
 * remembers must never outlive the tokens it was read from.
 */
describe('authenticate', () => {
  const known = (token: string, name: string, role: KnownToken['role']): KnownToken => ({
    name,
    role,
    scope: '*',
    digest: Buffer.from(hashToken(token), 'hex'),
  });
  /** A token source whose tokens the test replaces, as a reload of the tokens file does (a new array). */
  const source = (tokens: readonly KnownToken[]) => {
    const state = { tokens };
    const tokenSource: TokenSource = { current: () => state.tokens };
    return { state, tokenSource };
  };
  const app = (tokenSource: TokenSource) => {
    const served = express();
    served.use(authenticate(tokenSource));
    served.get('/who', (_req, res) => {
      const { name, role } = callerOf(res);
      res.json({ name, role });
    });
    const onError: ErrorRequestHandler = (err: Error, _req, res, _next) => {
      res.status(401).json({ error: err.message });
    };
    served.use(onError);
    return served;
  };
  const ask = (served: express.Express, token: string) =>
    request(served).get('/who').set('authorization', `Bearer ${token}`);

  it('answers for a token again and again, and refuses it once the tokens in force no longer hold it', async () => {
    const { state, tokenSource } = source([
      known('tok-a', 'a', 'editor'),
      known('tok-b', 'b', 'viewer'),
    ]);
    const served = app(tokenSource);
    for (let i = 0; i < 3; i++) {
      expect((await ask(served, 'tok-a')).body).toEqual({ name: 'a', role: 'editor' });
      expect((await ask(served, 'tok-b')).body).toEqual({ name: 'b', role: 'viewer' });
    }
    state.tokens = [known('tok-b', 'b', 'viewer')];
    expect((await ask(served, 'tok-a')).status).toBe(401);
    expect((await ask(served, 'tok-b')).body).toEqual({ name: 'b', role: 'viewer' });
  });

  it('gives a token the grant of the tokens read last, not the one it was first found with', async () => {
    const { state, tokenSource } = source([known('tok-a', 'a', 'admin')]);
    const served = app(tokenSource);
    expect((await ask(served, 'tok-a')).body.role).toBe('admin');
    state.tokens = [known('tok-a', 'a', 'viewer')];
    expect((await ask(served, 'tok-a')).body.role).toBe('viewer');
  });

  it('accepts a token added after it was refused', async () => {
    const { state, tokenSource } = source([known('tok-a', 'a', 'editor')]);
    const served = app(tokenSource);
    expect((await ask(served, 'tok-new')).status).toBe(401);
    state.tokens = [...state.tokens, known('tok-new', 'new', 'viewer')];
    expect((await ask(served, 'tok-new')).body).toEqual({ name: 'new', role: 'viewer' });
    expect((await ask(served, 'tok-a')).body).toEqual({ name: 'a', role: 'editor' });
  });

  it('refuses a remembered token once the tokens file that granted it is replaced without it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steward-authenticate-'));
    try {
      const file = join(dir, 'tokens.json');
      const entry = (token: string, name: string) => ({
        name,
        role: 'editor' as const,
        projects: ['*'],
        sha256: hashToken(token),
      });
      writeTokensFile(file, [entry('tok-a', 'a'), entry('tok-b', 'b')]);
      let now = 0;
      const served = app(createTokenSource({ file, logger: silentLogger, now: () => now }));
      expect((await ask(served, 'tok-a')).status).toBe(200);
      expect((await ask(served, 'tok-a')).status).toBe(200);
      // `steward token revoke` writes the file anew by rename; the source looks again after a second.
      writeTokensFile(file, [entry('tok-b', 'b')]);
      expect((await ask(served, 'tok-a')).status).toBe(200);
      now += 1000;
      expect((await ask(served, 'tok-a')).status).toBe(401);
      expect((await ask(served, 'tok-b')).body).toEqual({ name: 'b', role: 'editor' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
