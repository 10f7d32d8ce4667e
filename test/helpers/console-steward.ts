import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Page } from 'playwright-core';

import type { Config } from '../../src/config.js';
import type { StewardOverrides } from '../../src/steward.js';
import { ensureConsoleBuilt } from './console-build.js';
import { call, type Harness, startSteward } from './harness.js';
import { type Grants, writeTestTokens } from './test-tokens.js';

export interface ConsoleSteward<G extends Grants> extends Harness {
  /** http://127.0.0.1:{port}/ui/ */
  console: string;
  /** Each token's secret by name (what the sign-in page is given). */
  tokens: Record<keyof G, string>;
}

/**
 * A real Steward serving the built console at /ui over real HTTP on 127.0.0.1,
 * on a temporary SQLite file, with a tokens file when `grants` are given (open
 * otherwise). Builds dist/ui first when it is missing or older than ui/.
 */
export async function startConsoleSteward<G extends Grants = Record<never, never>>(
  options: {
    grants?: G;
    config?: Partial<Config>;
    overrides?: StewardOverrides;
  } = {},
): Promise<ConsoleSteward<G>> {
  await ensureConsoleBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'steward-console-'));
  const written = options.grants ? writeTestTokens(dir, options.grants) : undefined;
  const harness = await startSteward({
    dir,
    config: { ...options.config, ...(written ? { tokensFile: written.tokensFile } : {}) },
    ...(options.overrides ? { overrides: options.overrides } : {}),
  });
  return {
    ...harness,
    console: `${harness.url}/ui/`,
    tokens: (written?.secrets ?? {}) as Record<keyof G, string>,
    async close() {
      await harness.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Opens `route` (`#/resources?project=a`) signed in with `token`: the sign-in page
 * comes first (a new page has no token) and brings the user back to the route.
 */
export async function openSignedIn(
  openPage: () => Promise<Page>,
  s: { console: string },
  token: string,
  route = '#/resources',
): Promise<Page> {
  const page = await openPage();
  await page.goto(`${s.console}${route}`);
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  return page;
}

/** `call` (harness.ts) with `token` as the bearer: what a test does through the API beside the page. */
export function callAs(token: string) {
  return <T = any>(method: string, url: string, body?: unknown) =>
    call<T>(method, url, body, { authorization: `Bearer ${token}` });
}

/** A resource of the test's fake kind (test/helpers/fake-module.ts) made by `token`; the answer. */
export function createFake(
  s: { api: string },
  token: string,
  project: string,
  name: string,
  labels: Record<string, string> = {},
) {
  return callAs(token)('POST', `${s.api}/resources`, {
    kind: 'fake',
    project,
    name,
    labels,
    spec: { configs: {} },
  });
}
