import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { generateToken, hashToken, writeTokensFile } from '../../../src/api/auth/tokens-file.js';
import type { Config } from '../../../src/config.js';
import { type Harness, startSteward } from '../../helpers/harness.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const PRISM = join(ROOT, 'node_modules/.bin/prism');
export const FIXTURE_MODULES = join(ROOT, 'test/fixtures/modules');

/** The tokens of a deployment with a tokens file: an admin, a viewer (403 on a write), and one the file does not have. */
export interface Tokens {
  admin: string;
  viewer: string;
  unknown: string;
}

export interface Stand {
  h: Harness;
  /** The document this Steward serves. */
  doc: any;
  tokens?: Tokens;
  close(): Promise<void>;
}

/**
 * A Steward on a loopback port with the `ledger` fixture kind beside the built-in ones, open
 * or with a tokens file, and its served document.
 */
export async function startStand(options: {
  withTokens: boolean;
  config?: Partial<Config>;
}): Promise<Stand> {
  let tokens: Tokens | undefined;
  const extra: Partial<Config> = {};
  const dir = mkdtempSync(join(tmpdir(), 'steward-conformance-'));
  if (options.withTokens) {
    tokens = { admin: generateToken(), viewer: generateToken(), unknown: generateToken() };
    const file = join(dir, 'tokens.json');
    writeTokensFile(file, [
      { name: 'admin', role: 'admin', projects: ['*'], sha256: hashToken(tokens.admin) },
      { name: 'viewer', role: 'viewer', projects: ['*'], sha256: hashToken(tokens.viewer) },
    ]);
    extra.tokensFile = file;
    extra.rateLimitPerSecond = 0;
  }
  const h = await startSteward({
    dir,
    config: { modulePaths: [FIXTURE_MODULES], ...extra, ...options.config },
  });
  const doc = await (await fetch(`${h.url}/openapi.json`)).json();
  return { h, doc, ...(tokens ? { tokens } : {}), close: () => h.close() };
}

export interface Prism {
  url: string;
  /** Prism's log, for a failure's message. */
  output: string[];
  stop(): Promise<void>;
}

/**
 * Stoplight Prism in proxy mode in front of `upstream`, validating requests and answers
 * against `doc` (written to a file in `dir`). With `--errors` Prism answers a request that
 * breaks the document itself (422, or 401 for a missing token) and turns an answer that
 * breaks it into a 500 `application/problem+json`; every violation, warnings included, is
 * listed in its `sl-violations` header.
 */
export function startPrism(doc: object, upstream: string, dir: string): Promise<Prism> {
  const file = join(dir, `openapi-${Date.now()}.json`);
  writeFileSync(file, JSON.stringify(doc));
  const proc: ChildProcess = spawn(
    process.execPath,
    [PRISM, 'proxy', file, upstream, '--errors', '--host', '127.0.0.1', '--port', '0'],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
  );
  const output: string[] = [];
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`prism did not start:\n${output.join('')}`));
    }, 60_000);
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString());
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(chunk.toString());
      if (!match) return;
      clearTimeout(timer);
      resolve({
        url: match[1]!,
        output,
        async stop() {
          if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
          await exited;
        },
      });
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`prism exited before it listened:\n${output.join('')}`));
    });
  });
}
