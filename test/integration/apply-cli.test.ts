import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { stringify } from 'yaml';

import { ensureBuilt, runCli } from '../helpers/cli-run.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { type FakeSteward, startFakeSteward, urnOf } from '../helpers/fake-steward.js';

/**
 * `steward apply` and `steward diff` (docs/cli.md), the compiled CLI against a real Steward with its
 * worker on: a directory of 20 resources whose documents depend on each other, written in an order
 * that is not theirs.
 */

const COUNT = 20;
/** One Steward for the suite; each test works in a project of its own. */
let project = 'p';
const chainUrn = (name: string) => urnOf(name, 'chain', project);
const nameOf = (i: number) => `node-${String(i).padStart(2, '0')}`;
const nodeUrn = (i: number) => chainUrn(nameOf(i));
/** A tree: node i > 0 depends on node (i - 1) / 2, so dependencies go three deep. */
const parentOf = (i: number) => (i === 0 ? undefined : Math.floor((i - 1) / 2));

function documentOf(i: number, value = 1): Record<string, unknown> {
  const parent = parentOf(i);
  return {
    kind: 'chain',
    project,
    name: nameOf(i),
    labels: { tier: String(i % 3) },
    spec: {
      configs: { value },
      ...(parent === undefined ? {} : { dependencies: { up: nodeUrn(parent) } }),
    },
  };
}

/** A seeded shuffle (mulberry32), so a failure can be run again as it was. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  let state = seed;
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * The 20 documents in a shuffled order: five together in one YAML file (`---` between them), three
 * as JSON files, the rest one YAML file each, named so that the directory order is the shuffled one;
 * and a README the command must leave alone.
 */
function writeManifests(dir: string, seed = 1609): void {
  mkdirSync(dir, { recursive: true });
  const order = shuffled(
    Array.from({ length: COUNT }, (_, i) => i),
    seed,
  );
  writeFileSync(
    join(dir, '00-several.yaml'),
    order
      .slice(0, 5)
      .map((i) => stringify(documentOf(i)))
      .join('---\n'),
  );
  order.slice(5, 8).forEach((i, at) => {
    writeFileSync(join(dir, `${10 + at}-one.json`), JSON.stringify(documentOf(i)));
  });
  order.slice(8).forEach((i, at) => {
    writeFileSync(join(dir, `${20 + at}-one.yml`), stringify(documentOf(i)));
  });
  writeFileSync(join(dir, 'README.md'), '# not a manifest\n');
}

describeEachDialect('steward apply and diff', () => {
  let s: FakeSteward;
  let dir: string;
  let env: Record<string, string>;
  const steward = (args: string[], input?: string) => runCli(args, env, input);

  let tests = 0;
  /** The operations of this test's project. */
  const projectOperations = async () =>
    (await s.operations()).filter((op: { urn: string }) => op.urn.includes(`:${project}:`));

  beforeAll(async () => {
    ensureBuilt();
    s = await startFakeSteward({
      config: { worker: true },
      kinds: [{ kind: 'chain', dependencies: { up: { kind: 'chain', optional: true } } }],
    });
    env = { STEWARD_URL: s.h.url };
  }, 180_000);
  afterAll(() => s.close());
  beforeEach(() => {
    tests += 1;
    project = `p${tests}`;
    dir = mkdtempSync(join(tmpdir(), 'steward-apply-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('applies a directory of 20 resources dependencies first, waits for them, then finds them all unchanged', async () => {
    const manifests = join(dir, 'manifests');
    writeManifests(manifests);
    const first = await steward(['apply', '-f', manifests, '--wait', '--timeout', '60']);
    expect(first.stderr).not.toMatch(/^steward: /m);
    expect(first.code).toBe(0);
    const lines = first.stdout.trim().split('\n');
    expect(lines).toHaveLength(COUNT);
    expect(lines.every((line) => line.startsWith('created '))).toBe(true);
    const position = new Map(lines.map((line, at) => [line.slice('created '.length), at]));
    for (let i = 1; i < COUNT; i += 1)
      expect([
        nodeUrn(i),
        position.get(nodeUrn(i))! > position.get(nodeUrn(parentOf(i)!))!,
      ]).toEqual([nodeUrn(i), true]);
    for (let i = 0; i < COUNT; i += 1)
      expect((await s.get(nodeUrn(i))).body.state.status).toBe('COMPLETED');
    const operations = (await projectOperations()).length;
    expect(operations).toBe(COUNT);

    const second = await steward(['apply', '-f', manifests]);
    expect(second.code).toBe(0);
    expect(second.stdout.trim().split('\n').sort()).toEqual(
      Array.from({ length: COUNT }, (_, i) => `unchanged ${nodeUrn(i)}`).sort(),
    );
    expect((await projectOperations()).length).toBe(operations);

    // The same documents in another order: still nothing to do.
    const again = join(dir, 'again');
    writeManifests(again, 77);
    const json = await steward(['-o', 'json', 'apply', '-f', again]);
    expect(json.code).toBe(0);
    const outcomes = JSON.parse(json.stdout).resources.map((r: { outcome: string }) => r.outcome);
    expect(outcomes).toEqual(Array(COUNT).fill('unchanged'));
  });

  it('diff exits 0 when nothing would change and 1 when something would, and changes nothing', async () => {
    const manifests = join(dir, 'manifests');
    writeManifests(manifests);
    expect((await steward(['apply', '-f', manifests, '--wait'])).code).toBe(0);
    const same = await steward(['diff', '-f', manifests]);
    expect(same.code).toBe(0);
    expect(same.stdout.trim().split('\n')).toHaveLength(COUNT);
    expect(same.stdout).not.toMatch(/would be/);

    const changed = join(dir, 'changed.yaml');
    const extra = { kind: 'chain', project, name: 'extra', spec: { configs: {} } };
    writeFileSync(changed, [stringify(documentOf(3, 7)), stringify(extra)].join('---\n'));
    const before = (await projectOperations()).length;
    const diff = await steward(['diff', '-f', changed]);
    expect(diff.code).toBe(1);
    expect(diff.stdout).toContain(`would be updated ${nodeUrn(3)}\n  ~ /configs/value: 1 → 7`);
    expect(diff.stdout).toContain(`would be created ${chainUrn('extra')}`);
    const json = await steward(['-o', 'json', 'diff', '-f', changed]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      changed: true,
      resources: [
        { urn: nodeUrn(3), outcome: 'update', changes: [{ path: '/configs/value', to: 7 }] },
        { urn: chainUrn('extra'), outcome: 'create' },
      ],
    });
    expect((await projectOperations()).length).toBe(before);
    expect((await s.get(chainUrn('extra'))).status).toBe(404);

    const applied = await steward(['apply', '-f', '-'], stringify(documentOf(3, 7)));
    expect(applied).toMatchObject({ code: 0, stdout: `updated ${nodeUrn(3)}\n` });
  });

  it('refuses a cycle, or a dependency neither in the documents nor stored, before sending anything', async () => {
    const cycle = join(dir, 'cycle.yaml');
    const pair = (name: string, up: string) => ({
      kind: 'chain',
      project,
      name,
      spec: { dependencies: { up: chainUrn(up) } },
    });
    writeFileSync(
      cycle,
      [pair('a', 'b'), pair('b', 'a'), pair('c', 'a')].map((d) => stringify(d)).join('---\n'),
    );
    const refused = await steward(['apply', '-f', cycle]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `cycle: ${chainUrn('a')} → ${chainUrn('b')} → ${chainUrn('a')}`,
    );

    const orphan = join(dir, 'orphan.json');
    writeFileSync(orphan, JSON.stringify(pair('lonely', 'nowhere')));
    for (const command of ['apply', 'diff']) {
      const missing = await steward([command, '-f', orphan]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain(
        `${chainUrn('nowhere')} (a dependency of ${orphan}) is neither in the documents nor in Steward`,
      );
    }
    expect(await projectOperations()).toEqual([]);
  });
});
