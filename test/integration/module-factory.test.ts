import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { formatReport, runModuleContract } from '../../src/contract/index.js';
import { loadModuleFolder } from '../../src/contract/load-module.js';
import { importModuleEntry } from '../../src/core/modules/module-entry.js';
import { ModuleDefinitionError } from '../../src/core/modules/registry.js';
import { spawnSteward } from '../helpers/child-steward.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { call, waitForStatus } from '../helpers/harness.js';
import { testDatabase } from '../helpers/test-database.js';

/**
 * Modules outside the repository get the SDK by exporting a function (a factory) that
 * Steward's loader and the kit's call with `{ defineModule, stepwise, Type, … }`; and an
 * `index.ts` is loaded by transpiling it with the `typescript` package.
 */

// CommonJS (a folder outside any package is CommonJS), no import of Steward at all.
const NOTE_JS = `
const fs = require('node:fs');
const path = require('node:path');
const fileOf = (r) => path.join(process.env.OUT_DIR, r.name + '.note');
module.exports = ({ defineModule, stepwise, Type }) =>
  defineModule({
    kind: 'note',
    description: 'A note file in OUT_DIR.',
    configSchema: Type.Object({ text: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
    actions: { create: {}, update: {}, delete: {} },
    ...stepwise({
      plan: ({ action }) => (action === 'delete' ? ['remove'] : ['write']),
      steps: {
        write: (r) => fs.writeFileSync(fileOf(r), r.spec.configs.text),
        remove: (r) => fs.rmSync(fileOf(r), { force: true }),
      },
      output: (r) => ({ file: fileOf(r) }),
    }),
  });
`;

// TypeScript: types only for the reader (erased), a relative import of a helper beside it.
const MEMO_TS = `
import { rm, writeFile } from 'node:fs/promises';
import { fileOf } from './paths.mjs';

interface Memo { name: string; spec: { configs: { text: string } } }
interface Sdk {
  defineModule(definition: object): object;
  stepwise(options: object): object;
  Type: { Object(properties: object): object; String(options?: object): object };
}

export default ({ defineModule, stepwise, Type }: Sdk) =>
  defineModule({
    kind: 'memo',
    description: 'A memo file in OUT_DIR, written by a module in TypeScript.',
    configSchema: Type.Object({ text: Type.String({ minLength: 1 }) }),
    actions: { create: {}, update: {}, delete: {} },
    ...stepwise({
      plan: ({ action }: { action: string }): string[] => (action === 'delete' ? ['remove'] : ['write']),
      steps: {
        write: async (r: Memo) => { await writeFile(fileOf(r.name), r.spec.configs.text satisfies string); },
        remove: async (r: Memo) => { await rm(fileOf(r.name), { force: true }); },
      },
      output: (r: Memo) => ({ file: fileOf(r.name) }),
    }),
  });
`;
const PATHS_MJS = `
import { join } from 'node:path';
export const fileOf = (name) => join(process.env.OUT_DIR, name + '.memo');
`;

let dir: string;
let parent: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'steward-factory-modules-'));
  parent = join(dir, 'my-modules');
  write('note/index.js', NOTE_JS);
  write('memo/index.ts', MEMO_TS);
  write('memo/paths.mjs', PATHS_MJS);
  write(
    'memo/examples/m.json',
    JSON.stringify({ kind: 'memo', project: 'demo', name: 'm', spec: { configs: { text: 'hi' } } }),
  );
  mkdirSync(join(dir, 'out'));
  process.env.OUT_DIR = join(dir, 'out');
});
afterEach(() => {
  delete process.env.OUT_DIR;
  rmSync(dir, { recursive: true, force: true });
});

function write(file: string, text: string): void {
  mkdirSync(join(parent, file, '..'), { recursive: true });
  writeFileSync(join(parent, file), text);
}

describeOneDialect('sqlite', 'factory modules and index.ts from STEWARD_MODULE_PATHS', () => {
  it('a real Steward loads both, and each resource reaches COMPLETED and is deleted', async () => {
    const steward = await spawnSteward({
      STEWARD_DB: await testDatabase(dir),
      STEWARD_MODULE_PATHS: parent,
      OUT_DIR: join(dir, 'out'),
    });
    try {
      for (const [kind, extension] of [
        ['note', 'note'],
        ['memo', 'memo'],
      ] as const) {
        const urn = `orn:steward:${kind}:p:hello`;
        const created = await call('POST', `${steward.api}/resources`, {
          kind,
          project: 'p',
          name: 'hello',
          spec: { configs: { text: `a ${kind}` } },
        });
        expect(created.status).toBe(202);
        const done = await waitForStatus(steward.api, urn, 'COMPLETED');
        const file = join(dir, 'out', `hello.${extension}`);
        expect(done.state.output).toEqual({ file });
        expect(readFileSync(file, 'utf8')).toBe(`a ${kind}`);
        expect((await call('DELETE', `${steward.api}/resources/${urn}`)).status).toBe(202);
        await waitForStatus(steward.api, urn, 'GONE');
        expect(existsSync(file)).toBe(false);
      }
    } finally {
      expect(await steward.stop()).toBe(0);
    }
    // The transpiled index.ts lived in a temporary folder of its own: nothing was left beside the user's files.
    expect(readdirSync(join(parent, 'memo')).sort()).toEqual(['examples', 'index.ts', 'paths.mjs']);
  });
});

describe('the kit loads a module folder as Steward does', () => {
  it('runs the contract on the index.ts factory', async () => {
    const report = await runModuleContract({ dir: join(parent, 'memo') });
    if (!report.passed) console.log(formatReport(report));
    expect(report.kind).toBe('memo');
    expect(report.rules.filter((rule) => rule.status === 'FAIL')).toEqual([]);
    expect(readdirSync(join(parent, 'memo')).sort()).toEqual(['examples', 'index.ts', 'paths.mjs']);
  });

  it('calls a CommonJS factory with the SDK', async () => {
    const loaded = await loadModuleFolder(join(parent, 'note'));
    expect(loaded).toEqual({ definition: expect.objectContaining({ kind: 'note' }) });
  });

  it('says index.ts needs typescript when the package cannot be found', async () => {
    const folder = join(parent, 'memo');
    const failing = importModuleEntry(join(folder, 'index.ts'), folder, {
      loadTypescript: () => Promise.reject(new Error("Cannot find package 'typescript'")),
    });
    await expect(failing).rejects.toThrow(ModuleDefinitionError);
    await expect(failing).rejects.toThrow(
      `module ${folder}: index.ts needs \`npm install typescript\``,
    );
    expect(
      await loadModuleFolder(folder, { loadTypescript: () => Promise.reject(new Error('no')) }),
    ).toEqual({
      problem: expect.stringContaining('index.ts needs `npm install typescript`'),
    });
  });

  it.each([
    [
      'a syntax error in index.ts, with its line',
      'memo/index.ts',
      'export default (\n  {',
      /index\.ts:2: /,
    ],
    [
      'a factory that throws',
      'note/index.js',
      "module.exports = () => { throw new Error('no OUT_DIR'); };",
      /its exported function \(a module factory, called with the SDK\) threw: no OUT_DIR/,
    ],
  ])('names the folder and the problem for %s', async (_what, file, source, expected) => {
    write(file, source);
    const folder = join(parent, file.split('/')[0]!);
    const loaded = await loadModuleFolder(folder);
    expect(loaded).toEqual({ problem: expect.stringMatching(expected) });
    expect((loaded as { problem: string }).problem).toContain(folder);
  });
});
