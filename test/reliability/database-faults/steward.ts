import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { type ChildSteward, spawnSteward } from '../../helpers/child-steward.js';
import { call, type JsonResponse, waitFor, waitForStatus } from '../../helpers/harness.js';
import { testDatabase } from '../../helpers/test-database.js';
import { type FaultDb, openFaultDb } from './switch.js';

/**
 * The child Steward of the database-fault suite (test/reliability/database-faults/database-faults.test.ts)
 * and what the suite reads from it: its writes, its log lines, its ledger.
 */
const FIXTURE_MODULES = fileURLToPath(new URL('../../fixtures/modules', import.meta.url));

export const urnOf = (name: string, kind = 'ledger') => `orn:steward:${kind}:p:${name}`;

export interface FaultedSteward {
  dir: string;
  /** STEWARD_DB: a SQLite file, or a PostgreSQL URL in the PostgreSQL pass. */
  db: string;
  steward: ChildSteward;
  faults: FaultDb;
}

/** One child Steward on a fresh database in its own directory, with a short lease so a lost write-back is retried soon. */
export function useSteward(env: Record<string, string> = {}) {
  const ctx = {} as FaultedSteward;
  beforeAll(async () => {
    ctx.dir = mkdtempSync(join(tmpdir(), 'steward-dbfault-'));
    ctx.db = await testDatabase(ctx.dir);
    ctx.steward = await spawnSteward({
      STEWARD_DB: ctx.db,
      STEWARD_FILE_ROOT: join(ctx.dir, 'files'),
      STEWARD_MODULE_PATHS: FIXTURE_MODULES,
      LEDGER_FILE: join(ctx.dir, 'ledger.txt'),
      STEWARD_POLL_INTERVAL_MS: '50',
      STEWARD_BACKOFF_BASE_MS: '10',
      STEWARD_LEASE_MS: '1000',
      ...env,
    });
    ctx.faults = openFaultDb(ctx.db);
    for (const name of ['a', 'b']) expect((await create(ctx.steward, name)).status).toBe(202);
    const file = {
      kind: 'file',
      project: 'p',
      name: 'f',
      spec: { configs: { path: 'f.txt', content: 'x' } },
    };
    expect((await call('POST', `${ctx.steward.api}/resources`, file)).status).toBe(202);
    for (const urn of [urnOf('a'), urnOf('b'), urnOf('f', 'file')])
      await waitForStatus(ctx.steward.api, urn, 'COMPLETED');
  });
  afterAll(async () => {
    await ctx.faults?.close();
    await ctx.steward?.stop('SIGKILL');
    if (ctx.dir) rmSync(ctx.dir, { recursive: true, force: true });
  });
  return ctx;
}

export const create = (s: ChildSteward, name: string) =>
  call('POST', `${s.api}/resources`, { kind: 'ledger', project: 'p', name, spec: { configs: {} } });

/** One of each kind of accepted write: create, PATCH, an action (the file module's chmod) and delete, on COMPLETED resources. */
export function mutations(s: ChildSteward): Array<[string, () => Promise<JsonResponse>]> {
  return [
    ['create', () => create(s, 'c')],
    [
      'PATCH',
      () => call('PATCH', `${s.api}/resources/${urnOf('a')}`, { spec: { configs: { steps: 2 } } }),
    ],
    [
      'action',
      () =>
        call('POST', `${s.api}/resources/${urnOf('f', 'file')}/actions/chmod`, { mode: '0600' }),
    ],
    ['delete', () => call('DELETE', `${s.api}/resources/${urnOf('b')}`)],
  ];
}

/** The same writes once the fault is gone: each is accepted and converges, with its effect. */
export async function mutationsConverge(s: ChildSteward, dir: string): Promise<void> {
  const done: Array<'COMPLETED' | 'GONE'> = ['COMPLETED', 'COMPLETED', 'COMPLETED', 'GONE'];
  const urns = [urnOf('c'), urnOf('a'), urnOf('f', 'file'), urnOf('b')];
  for (const [i, [what, send]] of mutations(s).entries()) {
    const res = await send();
    expect({ what, status: res.status }).toEqual({ what, status: 202 });
    await waitForStatus(s.api, urns[i]!, done[i]!);
  }
  expect((await call('GET', `${s.api}/resources/${urnOf('a')}`)).body.spec.configs).toEqual({
    steps: 2,
    max_delay_ms: 0,
  });
  expect(statSync(join(dir, 'files', 'p', 'f.txt')).mode & 0o777).toBe(0o600);
}

export interface LogLine {
  message: string;
  level: string;
  [field: string]: unknown;
}

/** The child's JSON log lines written after `mark` (a length of its output). */
export function logsSince(s: ChildSteward, mark: number, message: string): LogLine[] {
  return s.output
    .join('')
    .slice(mark)
    .split('\n')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as LogLine];
      } catch {
        return [];
      }
    })
    .filter((line) => line.message === message);
}

export const outputMark = (s: ChildSteward) => s.output.join('').length;

/** Waits for `count` failed claims after `mark` and checks the worker waited longer after each (100 ms doubling, half jittered). */
export async function claimsBackOff(
  s: ChildSteward,
  mark: number,
  count: number,
  error: RegExp,
): Promise<void> {
  const failed = await waitFor(() => {
    const lines = logsSince(s, mark, 'claim failed; backing off');
    return lines.length >= count && lines;
  }, `${count} failed claims`);
  for (const line of failed)
    expect(line).toMatchObject({ level: 'warn', error: expect.stringMatching(error) });
  const delays = failed.slice(0, count).map((line) => line.delayMs as number);
  // The nominal delay doubles: the n-th lies in [100·2^(n-2), 100·2^(n-1)], so two failures apart never overlap.
  for (let i = 2; i < delays.length; i += 1) expect(delays[i]).toBeGreaterThan(delays[i - 2]!);
}

/** The process answers, and no request ever ended in a 500 ("unexpected error" is what the API logs for one). */
export async function stillUp(s: ChildSteward): Promise<void> {
  expect({ exitCode: s.proc.exitCode, signal: s.proc.signalCode }).toEqual({
    exitCode: null,
    signal: null,
  });
  expect((await call('GET', `${s.url}/healthz`)).status).toBe(200);
  expect((await call('GET', `${s.url}/readyz`)).status).toBe(200);
  expect(logsSince(s, 0, 'unexpected error')).toEqual([]);
}

export const ledgerSyncs = (dir: string, urn: string) =>
  (existsSync(join(dir, 'ledger.txt')) ? readFileSync(join(dir, 'ledger.txt'), 'utf8') : '')
    .split('\n')
    .filter((line) => line.startsWith(`end ${urn} `));
