import { createRegistry } from '../../src/core/modules/registry.js';
import { forCaller } from '../../src/core/requests/allowed-actions.js';
import { resourceJsonWriter } from '../../src/core/requests/resource-json.js';
import { resourceView } from '../../src/core/requests/views.js';
import { defineModule } from '../../src/sdk/index.js';
import { type ListedRow, rowToResource, rowToResourceItem } from '../../src/store/rows.js';
import { PLAIN_SECRET, resourceRow as row, STORED_ROWS as rows } from '../helpers/resource-rows.js';

/**
 * A list page's items are the documents the database wrote (resource-json.ts): the same
 * characters as the document put through the view and serialised, for every kind of row; and a
 * resource whose view would differ (secrets) goes through the view. The database writes a row's
 * document as JSON.stringify(rowToResource(row)) (test/integration/resource-document.test.ts), so
 * the items here are made that way.
 */

const plain = defineModule({
  kind: 'plain',
  description: 'A kind with nothing secret.',
  configSchema: { type: 'object', properties: { size: { type: 'number' } } },
  actions: { create: {}, update: {}, delete: {}, poke: {} },
  plan: () => ({ data: null }),
  sync: () => Promise.resolve({ status: 'COMPLETED' as const }),
  observe: () => Promise.resolve({ exists: true }),
});
const vault = defineModule({
  kind: 'vault',
  description: 'A kind with a writeOnly config.',
  configSchema: {
    type: 'object',
    properties: { user: { type: 'string' }, password: { type: 'string', writeOnly: true } },
  },
  actions: { create: {}, update: {}, delete: {} },
  plan: () => ({ data: null }),
  sync: () => Promise.resolve({ status: 'COMPLETED' as const }),
});
const keeper = defineModule({
  kind: 'keeper',
  description: 'A kind with a writeOnly output.',
  configSchema: { type: 'object' },
  outputSchema: {
    type: 'object',
    properties: { token: { type: 'string', writeOnly: true }, url: { type: 'string' } },
  },
  actions: { create: {}, update: {}, delete: {} },
  plan: () => ({ data: null }),
  sync: () => Promise.resolve({ status: 'COMPLETED' as const }),
});
const registry = createRegistry([
  { definition: plain, origin: 'test:plain' },
  { definition: vault, origin: 'test:vault' },
  { definition: keeper, origin: 'test:keeper' },
]);

/** The listed item of a stored row, its document as the database writes it. */
const itemOf = (stored: ListedRow) =>
  rowToResourceItem({ ...stored, json: JSON.stringify(rowToResource(stored)) }, 0);

describe('resourceJsonWriter', () => {
  it.each(rows)('%s: the same characters as the view serialised', (_, stored) => {
    const item = itemOf(stored);
    for (const mayChange of [undefined, false, true]) {
      const view = resourceView(rowToResource(stored), registry);
      const expected = JSON.stringify(
        mayChange === undefined ? view : forCaller(view, registry, mayChange),
      );
      expect(resourceJsonWriter(registry, mayChange)(item)).toBe(expected);
    }
  });

  it('never writes a sealed value or a writeOnly field, sealed or in plain text', () => {
    for (const mayChange of [undefined, false, true]) {
      const write = resourceJsonWriter(registry, mayChange);
      for (const [, stored] of rows) {
        const json = write(itemOf(stored));
        expect(json).not.toContain('sealed:');
        expect(json).not.toContain(PLAIN_SECRET);
        expect(JSON.parse(json).spec.configs).not.toHaveProperty('password');
        expect(JSON.parse(json).state.output).not.toHaveProperty('token');
      }
    }
  });

  it('a page of one writer gives each row its own allowed_actions', () => {
    const write = resourceJsonWriter(registry, true);
    const actionsOf = (stored: ListedRow) =>
      JSON.parse(write(itemOf(stored))).allowed_actions as string[];
    expect(actionsOf(row())).toContain('poke');
    expect(actionsOf(row({ paused: 1 }))).toContain('resume');
    expect(
      actionsOf(row({ policy: JSON.stringify({ mode: 'observe', on_delete: 'orphan' }) })),
    ).not.toContain('poke');
    expect(actionsOf(row())).toEqual(
      forCaller(rowToResource(row()), registry, true).allowed_actions,
    );
  });

  it('refuses a row listed without its document', () => {
    const item = rowToResourceItem({ ...row(), json: null }, 10);
    expect(item.json).toBeUndefined();
    expect(() => resourceJsonWriter(registry, undefined)(item)).toThrow(/without its document/);
  });
});
