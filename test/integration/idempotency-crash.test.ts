import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { type ChildSteward, spawnSteward } from '../helpers/child-steward.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { call } from '../helpers/harness.js';
import { isAlive } from '../helpers/local-processes.js';
import { testDatabase } from '../helpers/test-database.js';

/**
 * The durability of an Idempotency-Key (docs/api.md "Idempotency keys"): a child Steward is
 * killed with SIGKILL the moment the transaction holding the operation and the key has
 * committed, before any answer is sent (test/fixtures/idempotency/kill-after-key-commit.mjs,
 * preloaded with `node --import`, wraps the database drivers). The retry, on a new process,
 * gets the answer and no second operation is made.
 */
const CLI = fileURLToPath(new URL('../../dist/src/cli.js', import.meta.url));
const KILL_AFTER_KEY_COMMIT = fileURLToPath(
  new URL('../fixtures/idempotency/kill-after-key-commit.mjs', import.meta.url),
);

describeEachDialect('a Steward killed between the operation commit and the answer', () => {
  let dir = '';
  const children: ChildSteward[] = [];

  beforeAll(() => {
    if (!existsSync(CLI))
      throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does)`);
  });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-idem-crash-'));
  });
  afterEach(async () => {
    const stopped = children.splice(0);
    await Promise.all(stopped.map((child) => child.stop('SIGKILL')));
    expect(stopped.map((child) => child.proc.pid!).filter(isAlive)).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });
  const spawn = async (env: Record<string, string>) => {
    const child = await spawnSteward(env, ['serve']);
    children.push(child);
    return child;
  };

  it('answers the retry with the committed answer, and makes exactly one operation', async () => {
    const env = {
      STEWARD_DB: await testDatabase(dir),
      STEWARD_FILE_ROOT: join(dir, 'files'),
      STEWARD_RUN_DIR: join(dir, 'run'),
    };
    const body = {
      kind: 'file',
      project: 'p',
      name: 'note',
      spec: { configs: { path: 'note.txt', content: 'hi' } },
    };
    const headers = { 'Idempotency-Key': 'crash-once' };

    const victim = await spawn({ ...env, NODE_OPTIONS: `--import=${KILL_AFTER_KEY_COMMIT}` });
    // The connection ends without an answer: the process died right after its commit.
    await expect(call('POST', `${victim.api}/resources`, body, headers)).rejects.toThrow();
    expect(await victim.stop('SIGKILL')).toBeNull();
    expect(victim.proc.signalCode).toBe('SIGKILL');

    const heir = await spawn(env);
    const retry = await call('POST', `${heir.api}/resources`, body, headers);
    expect(retry.status).toBe(202);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const urn = retry.body.resource.urn as string;
    const operations = (await call('GET', `${heir.api}/operations?urn=${encodeURIComponent(urn)}`))
      .body.operations as Array<{ id: string; action: string }>;
    expect(operations.map((op) => [op.id, op.action])).toEqual([
      [retry.body.operation.id, 'create'],
    ]);
    expect(retry.headers.get('location')).toBe(`/api/v1beta1/operations/${operations[0]!.id}`);

    // Without the key, the same body is a second request: the resource exists.
    expect((await call('POST', `${heir.api}/resources`, body)).status).toBe(409);
  });
});
