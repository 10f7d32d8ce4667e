import type { Resource } from '../model.js';
import type { Registry } from '../modules/registry.js';
import { parseResourceText, type ResourceText } from '../resource-text.js';
import { allowedActionsOf, forCaller } from './allowed-actions.js';
import { resourceView } from './views.js';

/**
 * Where a stored JSON text may hold a sealed value: the prefix as it is written, or any
 * `\u` escape (JSON.stringify, which wrote every stored text, escapes only control characters
 * and lone surrogates, but an escaped `$` would hide the prefix from the first test).
 */
const MAY_HOLD_SEALED = /\$sealed:|\\u/;

/**
 * The JSON of each listed resource as the API shows it to one caller:
 * `JSON.stringify(forCaller(resourceView(resource)))`, with `allowed_actions` when `mayChange`
 * is given. When the view would be the resource itself (its module is loaded, marks nothing
 * writeOnly, and neither configs nor output holds a sealed value), the stored JSON texts are
 * written into the item as they are, in the document's key order, instead of being parsed and
 * serialised again; every other resource goes through the view. Stored texts were written by
 * JSON.stringify, so the two give the same characters (test/unit/resource-json.test.ts).
 */
export function resourceJsonWriter(
  registry: Registry,
  mayChange: boolean | undefined,
): (text: ResourceText) => string {
  /** allowed_actions' JSON by what decides it (few distinct values on a page; the last one first). */
  const actions = new Map<string, string>();
  let last: { text: ResourceText; json: string } | undefined;
  const actionsJson = (text: ResourceText): string => {
    if (
      last &&
      last.text.kind === text.kind &&
      last.text.status === text.status &&
      last.text.paused === text.paused &&
      last.text.policy === text.policy
    )
      return last.json;
    const key = `${text.kind}\0${text.status}\0${text.paused}\0${text.policy}`;
    let json = actions.get(key);
    if (json === undefined) {
      const { mode } = JSON.parse(text.policy) as Resource['spec']['policy'];
      const { kind, status, paused } = text;
      json = JSON.stringify(allowedActionsOf({ kind, status, paused, mode }, registry, mayChange!));
      actions.set(key, json);
    }
    last = { text, json };
    return json;
  };

  return (text) => {
    const { large } = text;
    if (!large) throw new Error(`resource ${text.urn} was listed without its large columns`);
    const module = registry.find(text.kind);
    if (
      !module ||
      module.hasSecretConfigs ||
      module.hasSecretOutput ||
      MAY_HOLD_SEALED.test(large.configs) ||
      MAY_HOLD_SEALED.test(large.output)
    ) {
      const view = resourceView(parseResourceText(text, large), registry);
      return JSON.stringify(mayChange === undefined ? view : forCaller(view, registry, mayChange));
    }
    const q = JSON.stringify;
    let sync = `{"attempts":${q(text.attempts)},"last_error":${q(large.last_error)},"next_sync_at":${q(text.next_sync_at)},"last_synced_at":${q(text.last_synced_at)}`;
    if (large.waiting_on) sync += `,"waiting_on":${large.waiting_on}`;
    if (text.deadline_at !== undefined) sync += `,"deadline_at":${q(text.deadline_at)}`;
    return (
      `{"urn":${q(text.urn)},"kind":${q(text.kind)},"project":${q(text.project)},"name":${q(text.name)}` +
      `,"labels":${large.labels},"version":${q(text.version)},"created_at":${q(text.created_at)}` +
      `,"updated_at":${q(text.updated_at)},"created_by":${q(text.created_by)},"updated_by":${q(text.updated_by)}` +
      `,"spec":{"configs":${large.configs},"dependencies":${large.dependencies},"policy":${text.policy}}` +
      `,"state":{"status":${q(text.status)},"action":${q(text.action)},"operation_id":${q(text.operation_id)}` +
      `,"output":${large.output},"data":${large.data},"observed_version":${q(text.observed_version)}` +
      `,"sync":${sync}},"paused":${q(text.paused)},"drift":${text.drift ?? 'null'}}` +
      (mayChange === undefined ? '}' : `,"allowed_actions":${actionsJson(text)}}`)
    );
  };
}
