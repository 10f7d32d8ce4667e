import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { spawnSteward } from '../helpers/child-steward.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { call, waitForStatus } from '../helpers/harness.js';
import { testDatabase } from '../helpers/test-database.js';

/**
 * A user writes a module in a folder of their own — plain CommonJS, no Steward
 * import, outside this repository — points STEWARD_MODULE_PATHS at its parent,
 * and the kind works through the API.
 */
const GREETING = `
const fs = require('node:fs');
const path = require('node:path');
module.exports = {
  kind: 'greeting',
  description: 'Writes a greeting file into OUT_DIR.',
  configSchema: { type: 'object', required: ['who'], additionalProperties: false, properties: { who: { type: 'string', minLength: 1 } } },
  actions: { create: {}, update: {}, delete: {} },
  plan: ({ action }) => ({ data: { step: action === 'delete' ? 'remove' : 'write' } }),
  async sync({ resource }) {
    const file = path.join(process.env.OUT_DIR, resource.name + '.txt');
    if (resource.state.data.step === 'remove') { fs.rmSync(file, { force: true }); return { status: 'COMPLETED' }; }
    fs.writeFileSync(file, 'hello ' + resource.spec.configs.who);
    return { status: 'COMPLETED', output: { file } };
  },
};
`;

describeOneDialect('sqlite', 'a user module from STEWARD_MODULE_PATHS', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-user-modules-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function writeModule(folder: string, source: string): string {
    const parent = join(dir, 'my-modules');
    mkdirSync(join(parent, folder), { recursive: true });
    writeFileSync(join(parent, folder, 'index.js'), source);
    return parent;
  }

  it('is loaded at start and works through the API', async () => {
    const parent = writeModule('greeting', GREETING);
    const out = join(dir, 'out');
    mkdirSync(out);
    const steward = await spawnSteward({
      STEWARD_DB: await testDatabase(dir),
      STEWARD_MODULE_PATHS: parent,
      OUT_DIR: out,
    });
    try {
      const kinds = await call('GET', `${steward.api}/modules`);
      expect(kinds.body.modules.map((m: { kind: string }) => m.kind)).toEqual(
        expect.arrayContaining(['file', 'greeting']),
      );
      const bad = await call('POST', `${steward.api}/resources`, {
        kind: 'greeting',
        project: 'p',
        name: 'world',
        spec: { configs: {} },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.problems).toEqual([
        { path: '/spec/configs/who', message: "must have required property 'who'" },
      ]);

      const created = await call('POST', `${steward.api}/resources`, {
        kind: 'greeting',
        project: 'p',
        name: 'world',
        spec: { configs: { who: 'world' } },
      });
      expect(created.status).toBe(202);
      const done = await waitForStatus(steward.api, 'orn:steward:greeting:p:world', 'COMPLETED');
      expect(done.state.output.file).toBe(join(out, 'world.txt'));
      expect(readFileSync(join(out, 'world.txt'), 'utf8')).toBe('hello world');
    } finally {
      expect(await steward.stop()).toBe(0);
    }
  });

  it.each([
    [
      'a module missing delete',
      GREETING.replace('delete: {} ', ''),
      /actions must include "delete"/,
    ],
    [
      'a module with a bad schema',
      GREETING.replace("type: 'string', minLength: 1", "type: 'strng'"),
      /configSchema: invalid JSON Schema/,
    ],
    [
      'a module that throws on load',
      "throw new Error('boom at load');",
      /failed to load: boom at load/,
    ],
    [
      'a module with a bad kind',
      GREETING.replace("kind: 'greeting'", "kind: 'Greeting!'"),
      /kind "Greeting!" does not match/,
    ],
    [
      'a module whose kind is taken',
      GREETING.replace("kind: 'greeting'", "kind: 'file'"),
      /kind "file" is already defined by modules\/file/,
    ],
  ])('stops start-up naming the folder: %s', async (_name, source, message) => {
    const parent = writeModule('broken', source);
    const db = await testDatabase(dir);
    const failure = spawnSteward({
      STEWARD_DB: db,
      STEWARD_MODULE_PATHS: parent,
    });
    await expect(failure).rejects.toThrow(/exited with 1/);
    const text = String(await failure.catch((err: Error) => err.message));
    expect(text).toMatch(message);
    expect(text).toContain(join(parent, 'broken'));
  });

  it('stops start-up when STEWARD_MODULE_PATHS names a missing directory, or a setting is invalid', async () => {
    const db = await testDatabase(dir);
    const missing = spawnSteward({
      STEWARD_DB: db,
      STEWARD_MODULE_PATHS: join(dir, 'nope'),
    });
    await expect(missing).rejects.toThrow(/names a directory that does not exist/);
    const invalid = spawnSteward({
      STEWARD_DB: db,
      STEWARD_WORKER_CONCURRENCY: 'lots',
      STEWARD_LOG_LEVEL: 'loud',
    });
    await expect(invalid).rejects.toThrow(
      /STEWARD_LOG_LEVEL="loud" must be one of[\s\S]*STEWARD_WORKER_CONCURRENCY="lots" must be a whole number/,
    );
  });
});
