import { CliError } from '../../src/cli/cli-error.js';
import { parseManifests } from '../../src/cli/manifest-files.js';
import { orderByDependencies, outsideDependencies } from '../../src/cli/manifest-order.js';

/** `steward apply`'s reading and ordering of documents (src/cli/manifest-files.ts, manifest-order.ts), without a server. */

const urn = (name: string) => `orn:steward:fake:p:${name}`;
const doc = (name: string, ...ups: string[]) =>
  JSON.stringify({
    kind: 'fake',
    project: 'p',
    name,
    spec: { dependencies: Object.fromEntries(ups.map((up, i) => [`d${i}`, urn(up)])) },
  });
const manifests = (...docs: string[]) => parseManifests(docs.join('\n---\n'), 'f.yaml');

describe('apply manifests', () => {
  it('reads several documents, skips empty ones, and takes the flat form (parent, dependencies)', () => {
    const read = parseManifests(
      `---\nkind: fake\nparent: p\nname: a\ndependencies: {x: ${urn('b')}}\n---\n---\n${doc('b')}\n`,
      'f.yaml',
    );
    expect(read.map((m) => [m.where, m.urn, m.dependsOn])).toEqual([
      ['f.yaml#1', urn('a'), [urn('b')]],
      ['f.yaml#3', urn('b'), []],
    ]);
  });

  it.each([
    ['a list', '[1, 2]', /must hold an object/],
    ['no name', '{"kind": "fake", "project": "p"}', /has no name/],
    ['no project', '{"kind": "fake", "name": "a"}', /has no project \(or parent\)/],
    ['bad YAML', 'kind: [', /neither JSON nor YAML/],
  ])('refuses %s with a usage error naming the document', (_what, text, message) => {
    expect(() => parseManifests(text, 'f.yaml')).toThrow(message);
    expect(() => parseManifests(text, 'f.yaml')).toThrow(CliError);
  });

  it('orders dependencies first, keeping the reading order among the ready ones', () => {
    const ordered = orderByDependencies(
      manifests(doc('d', 'b', 'c'), doc('c', 'a'), doc('b', 'a'), doc('a'), doc('e')),
    );
    expect(ordered.map((m) => m.urn)).toEqual(['a', 'e', 'c', 'b', 'd'].map(urn));
  });

  it('names a cycle, and lists the dependencies outside the set once', () => {
    expect(() => orderByDependencies(manifests(doc('a'), doc('b', 'c'), doc('c', 'b')))).toThrow(
      `cycle: ${urn('b')} → ${urn('c')} → ${urn('b')}`,
    );
    expect(() => orderByDependencies(manifests(doc('s', 's')))).toThrow(
      `cycle: ${urn('s')} → ${urn('s')}`,
    );
    expect(outsideDependencies(manifests(doc('a', 'x'), doc('b', 'x', 'a', 'y')))).toEqual([
      urn('x'),
      urn('y'),
    ]);
  });
});
