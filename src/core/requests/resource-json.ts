import type { Resource, ResourcePolicy } from '../model.js';
import type { Registry } from '../modules/registry.js';
import type { ResourceItem } from '../resource-item.js';
import { allowedActionsOf, forCaller } from './allowed-actions.js';
import { resourceView } from './views.js';

/**
 * Whether a document may hold a sealed value: the prefix as it is written, or any `\u` escape
 * (JSON.stringify, which wrote every stored text, escapes only control characters and lone
 * surrogates, but an escaped `$` would hide the prefix from the first test). Asked of the whole
 * document: a label or an error holding either only sends its item through the view, which gives
 * the same characters.
 */
const mayHoldSealed = (json: string) => json.includes('$sealed:') || json.includes('\\u');

/**
 * allowed_actions' JSON by registry (fixed once built), then by caller and what decides it: a few
 * dozen values at most. Kept across requests: a GET worked it out anew each time, 2.8 % of its CPU.
 */
const actionsByRegistry = new WeakMap<Registry, Map<string, string>>();

function allowedActionsJson(
  registry: Registry,
  mayChange: boolean,
  { kind, status, paused }: ResourceItem,
  mode: ResourcePolicy['mode'],
): string {
  let known = actionsByRegistry.get(registry);
  if (!known) actionsByRegistry.set(registry, (known = new Map()));
  const key = `${mayChange}\0${kind}\0${status}\0${paused}\0${mode}`;
  let json = known.get(key);
  if (json === undefined) {
    json = JSON.stringify(allowedActionsOf({ kind, status, paused, mode }, registry, mayChange));
    known.set(key, json);
  }
  return json;
}

/**
 * The JSON of each listed resource as the API shows it to one caller:
 * `JSON.stringify(forCaller(resourceView(resource)))`, with `allowed_actions` when `mayChange`
 * is given. When the view would be the resource itself (its module is loaded, marks nothing
 * writeOnly, and the document holds no sealed value), the document the database wrote
 * (store/resource-document.ts) is the item as it is, `allowed_actions` added at its end; every
 * other resource is parsed and goes through the view. The database's document has the characters
 * of JSON.stringify (test/unit/resource-json.test.ts, test/integration/resource-document.test.ts).
 */
export function resourceJsonWriter(
  registry: Registry,
  mayChange: boolean | undefined,
): (item: ResourceItem) => string {
  /** allowed_actions' JSON by what decides it (few distinct values on a page; the last one first). */
  const actions = new Map<string, string>();
  let last: { item: ResourceItem; json: string } | undefined;
  const actionsJson = (item: ResourceItem): string => {
    if (
      last &&
      last.item.kind === item.kind &&
      last.item.status === item.status &&
      last.item.paused === item.paused &&
      last.item.policy === item.policy
    )
      return last.json;
    const key = `${item.kind}\0${item.status}\0${item.paused}\0${item.policy}`;
    let json = actions.get(key);
    if (json === undefined) {
      const { mode } = JSON.parse(item.policy) as ResourcePolicy;
      json = allowedActionsJson(registry, mayChange!, item, mode);
      actions.set(key, json);
    }
    last = { item, json };
    return json;
  };

  return (item) => {
    const { json } = item;
    if (json === undefined) throw new Error(`resource ${item.urn} was listed without its document`);
    const module = registry.find(item.kind);
    if (!module || module.hasSecretConfigs || module.hasSecretOutput || mayHoldSealed(json)) {
      const view = resourceView(JSON.parse(json) as Resource, registry);
      return JSON.stringify(mayChange === undefined ? view : forCaller(view, registry, mayChange));
    }
    return mayChange === undefined
      ? json
      : `${json.slice(0, -1)},"allowed_actions":${actionsJson(item)}}`;
  };
}
