import { InvalidRequestError, NotFoundError } from '../../src/core/errors.js';
import { createRegistry, ModuleDefinitionError } from '../../src/core/modules/registry.js';
import { createFakeModule } from '../helpers/fake-module.js';

describe('the module registry', () => {
  const base = () => ({ ...createFakeModule().definition });

  it.each([
    ['not an object', () => 42, /does not export a module definition object/],
    ['a bad kind', () => ({ ...base(), kind: 'Bad Kind' }), /does not match/],
    [
      'no description',
      () => ({ ...base(), description: undefined }),
      /description must be a string/,
    ],
    ['no plan', () => ({ ...base(), plan: undefined }), /plan must be a function/],
    ['no sync', () => ({ ...base(), sync: 'nope' }), /sync must be a function/],
    [
      'missing update',
      () => ({ ...base(), actions: { create: {}, delete: {} } }),
      /actions must include "update"/,
    ],
    [
      'a broken config schema',
      () => ({ ...base(), configSchema: { type: 'nope' } }),
      /configSchema: invalid JSON Schema/,
    ],
    [
      'a broken params schema',
      () => ({
        ...base(),
        actions: { create: {}, update: {}, delete: {}, go: { paramsSchema: { minimum: 'x' } } },
      }),
      /actions.go.paramsSchema/,
    ],
    [
      'a bad resync interval',
      () => ({ ...base(), resyncIntervalMs: -1 }),
      /resyncIntervalMs must be a positive number/,
    ],
    [
      'a dependency without a kind',
      () => ({ ...base(), dependencies: { db: {} } }),
      /dependency "db" must name a kind/,
    ],
  ])('refuses %s, naming the module', (_what, make, message) => {
    expect(() => createRegistry([{ definition: make(), origin: '/somewhere/mod' }])).toThrow(
      ModuleDefinitionError,
    );
    expect(() => createRegistry([{ definition: make(), origin: '/somewhere/mod' }])).toThrow(
      message,
    );
    expect(() => createRegistry([{ definition: make(), origin: '/somewhere/mod' }])).toThrow(
      '/somewhere/mod',
    );
  });

  it('refuses a duplicate kind, naming both origins', () => {
    expect(() =>
      createRegistry([
        { definition: base(), origin: 'first' },
        { definition: base(), origin: 'second' },
      ]),
    ).toThrow('module second: kind "fake" is already defined by first');
  });

  it('lists kinds, and answers unknown kinds with the known ones', () => {
    const registry = createRegistry([{ definition: base(), origin: 'x' }]);
    expect(registry.kinds()).toEqual(['fake']);
    expect(() => registry.get('nope')).toThrow(InvalidRequestError);
    expect(() => registry.get('nope')).toThrow('known kinds: fake');
    expect(() => registry.describe('nope')).toThrow(NotFoundError);
  });
});
