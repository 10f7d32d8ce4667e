import { AlreadyExistsError } from '../core/errors.js';
import { NAME_MAX_CHARS } from '../core/names.js';
import type { RequestOptions } from '../core/requests/command-types.js';
import type { ObserveResult } from '../sdk/index.js';
import { converge, type ConvergeContext, message } from './converge.js';
import { observeOnce, pathsOf, resyncProblem, syncInputOf } from './direct-calls.js';
import type { Example } from './examples.js';

const AS: RequestOptions = { actor: 'contract-kit' };
const SUFFIX = '-twin';

/**
 * Rule 9, right after the example's resource `urn` was created: a twin, the same
 * create body under another name, must not take over what the first holds. It is
 * refused when accepted (409 from the module's `claimKey`), or its create ends in
 * ERROR, or it makes an object of its own (when the configs do not name one, as a
 * resource named by its name). Whichever: after the twin's create and again after
 * its delete, the first is unchanged. With `observe`, the first observes exactly
 * as it did before the twin (`baseline`: exists, configs, output and `data`, the
 * ownership marker); without, its next sync is still a no-op converge (COMPLETED
 * with the same output), and after the twin's delete an update of the same spec
 * still converges — weaker: a sync that quietly remakes the object passes.
 * The twin is deleted through Steward, so its delete must not remove what it
 * never held either.
 */
export async function checkNoTakeover(
  ctx: ConvergeContext,
  example: Example,
  urn: string,
  baseline: ObserveResult | undefined,
): Promise<void> {
  const { book, steward } = ctx;
  const name = twinName(example.create.name);
  const first = example.name;
  const at = `twin ${name} of ${first} (same configs)`;
  let twin: string;
  try {
    twin = (await steward.commands.create({ ...structuredClone(example.create), name }, AS))
      .resource.urn;
  } catch (err) {
    const claim = err instanceof AlreadyExistsError ? claimOf(err.details) : undefined;
    if (claim !== undefined)
      book.pass('create-never-takes-over', `${at}: refused (409, claimKey ${claim})`);
    else book.skip('create-never-takes-over', `${at}: refused: ${message(err)}`);
    return;
  }
  const failures: string[] = [];
  const created = await converge(ctx, twin, 'create', `${at}: its create`);
  if (created.end !== 'COMPLETED' && created.end !== 'ERROR')
    failures.push(`its create did not end: ${created.detail}`);
  const ended = created.end === 'ERROR' ? 'ended in ERROR' : 'made its own object';
  const afterCreate = await firstChanged(ctx, urn, first, baseline);
  if (afterCreate) failures.push(`its create ${created.end} and took over: ${afterCreate}`);

  // A delete that does not converge is rule 7's verdict; here it only leaves the last check unjudged.
  const stuck = await deleteTwin(ctx, twin, at);
  if (stuck) book.skip('create-never-takes-over', `${at}: ${stuck}; ${first} after it not judged`);
  else {
    const afterDelete =
      (await firstChanged(ctx, urn, first, baseline)) ??
      (baseline ? undefined : await updateProblem(ctx, urn, first, at));
    if (afterDelete) failures.push(`after its delete, ${afterDelete}`);
  }
  for (const why of failures) book.fail('create-never-takes-over', `${at}: ${why}`);
  const checks = baseline ? 'observes the same' : 'still syncs as a no-op';
  const update = baseline || stuck ? '' : ', and an update of the same spec converges';
  if (!failures.length)
    book.pass(
      'create-never-takes-over',
      `${at}: ${ended}; ${first} ${checks} after the twin's create${stuck ? '' : ' and delete'}${update}`,
    );
}

/** What changed for the first resource, in words, or undefined when nothing did. */
async function firstChanged(
  ctx: ConvergeContext,
  urn: string,
  first: string,
  baseline: ObserveResult | undefined,
): Promise<string | undefined> {
  const input = await syncInputOf(ctx, urn);
  if (!input) return `${first} is gone`;
  if (!baseline) return resyncProblem(ctx, input).then((why) => why && `${first}: ${why}`);
  const now = await observeOnce(ctx, input);
  if (!('value' in now.outcome)) return `observe of ${first} threw: ${message(now.outcome.error)}`;
  const changed = pathsOf(baseline, now.outcome.value);
  return changed ? `observe of ${first} differs from before the twin at ${changed}` : undefined;
}

/**
 * Without observe, a sync of a COMPLETED resource may not look at the backend at
 * all; an update of the same spec does its work again, so it fails where the
 * twin's delete took the first's object away (a role dropped under it).
 */
async function updateProblem(
  ctx: ConvergeContext,
  urn: string,
  first: string,
  at: string,
): Promise<string | undefined> {
  try {
    await ctx.steward.commands.update(urn, {}, AS);
  } catch (err) {
    return `an update of ${first} with the same spec was refused: ${message(err)}`;
  }
  const updated = await converge(ctx, urn, 'update', `${at}: the update of ${first}`);
  return updated.end === 'COMPLETED'
    ? undefined
    : `an update of ${first} with the same spec did not converge: ${updated.detail}`;
}

/** Deletes the twin through Steward; what went wrong, or undefined when it is gone. */
async function deleteTwin(
  ctx: ConvergeContext,
  twin: string,
  at: string,
): Promise<string | undefined> {
  try {
    await ctx.steward.commands.remove(twin, AS);
  } catch (err) {
    return `its delete was refused: ${message(err)}`;
  }
  const deleted = await converge(ctx, twin, 'delete', `${at}: its delete`);
  return deleted.end === 'DELETED' ? undefined : `its delete did not end: ${deleted.detail}`;
}

/** The example's name with `-twin`, shortened to fit a name. */
function twinName(name: string): string {
  return `${name.slice(0, NAME_MAX_CHARS - SUFFIX.length)}${SUFFIX}`;
}

function claimOf(details: unknown): string | undefined {
  const claim = (details as { claim?: unknown } | undefined)?.claim;
  return typeof claim === 'string' ? claim : undefined;
}
