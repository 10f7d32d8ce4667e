import type { RequestOptions } from '../core/requests/command-types.js';
import type { SyncInput } from '../sdk/index.js';
import { converge, type ConvergeContext, type Convergence, message, syncOnce } from './converge.js';
import { syncInputOf } from './direct-calls.js';
import type { Example } from './examples.js';
import { checkNoTakeover } from './no-takeover.js';
import {
  checkObserveAfterCreate,
  checkObserveAfterDelete,
  hasObserve,
  stillThere,
} from './observe-rules.js';
import { footprint, judgeParamsMatter, otherParams } from './params-matter.js';
import { OBSERVE_RULES } from './rules.js';

const AS: RequestOptions = { actor: 'contract-kit' };
/** `runWith` did not converge: the example's own run of the action is skipped. */
const NOT_RUN = Symbol('not run');
/** The rules judged on a created resource (rules 9–12). */
const AFTER_CREATE = ['create-never-takes-over', ...OBSERVE_RULES] as const;

/**
 * One example's whole life on the real Steward: create; then update and every
 * module action against the created resource; then delete, and delete once more
 * from the start against the torn-down backend. Each request goes through the
 * core's commands exactly as the API's would.
 */
export async function runExample(
  ctx: ConvergeContext,
  example: Example,
  declared: readonly string[],
  examples: readonly Example[] = [example],
): Promise<void> {
  const { steward, book, secrets } = ctx;
  const at = (action: string) => `${action} (${example.name})`;
  secrets.rememberConfigs(example.create.configs);

  let urn: string;
  try {
    urn = (await steward.commands.create(example.create, AS)).resource.urn;
  } catch (err) {
    book.fail('actions-plan', `${at('create')}: refused: ${message(err)}`);
    for (const rule of [...AFTER_CREATE, 'actions-converge', 'delete-converges'] as const)
      book.skip(rule, `${at('create')} was refused`);
    return;
  }
  book.pass('actions-plan', `${at('create')} planned`);
  secrets.check(await steward.store.findResource(urn), `${at('create')} accepted`);
  const created = await converge(ctx, urn, 'create', at('create'));
  const observes = hasObserve(ctx);
  if (created.end === 'COMPLETED') {
    book.pass('create-converges', `${at('create')}: ${created.detail}`);
    const baseline = observes ? await checkObserveAfterCreate(ctx, urn, at('create')) : undefined;
    await checkNoTakeover(ctx, example, urn, baseline);
  } else {
    book.fail('create-converges', `${at('create')}: ${created.detail}`);
    for (const rule of AFTER_CREATE) book.skip(rule, `${at('create')} did not converge`);
  }

  const others = [
    'update',
    ...declared.filter((action) => !['create', 'update', 'delete'].includes(action)),
  ];
  for (const action of others) {
    const current = await steward.store.findResource(urn);
    if (!current || current.state.status === 'PENDING') {
      const why = `${at(action)}: not planned, the resource is ${current ? 'still PENDING' : 'gone'}`;
      book.skip('actions-plan', why);
      book.skip('actions-converge', why);
      continue;
    }
    const params = example.params[action];
    const other =
      action === 'update'
        ? undefined
        : otherParams(
            ctx,
            action,
            params,
            examples.map((e) => e.params[action]).filter((p) => p !== undefined),
          );
    const before = other === undefined ? undefined : await runWith(ctx, urn, action, other, at);
    if (before === NOT_RUN) continue;
    try {
      if (action === 'update') await steward.commands.update(urn, example.update, AS);
      else await steward.commands.execute(urn, action, params ?? {}, AS);
    } catch (err) {
      const hint =
        params === undefined && action !== 'update'
          ? ` (give its params in examples/${example.name}.actions.json)`
          : '';
      book.fail('actions-plan', `${at(action)}: refused: ${message(err)}${hint}`);
      book.skip('actions-converge', `${at(action)} was refused`);
      continue;
    }
    book.pass('actions-plan', `${at(action)} planned`);
    secrets.rememberParams(action, params);
    if (action === 'update') secrets.rememberConfigs(example.update.configs);
    secrets.check(await steward.store.findResource(urn), `${at(action)} accepted`);
    const ran = await converge(ctx, urn, action, at(action));
    if (ran.end === 'COMPLETED') book.pass('actions-converge', `${at(action)}: ${ran.detail}`);
    else book.fail('actions-converge', `${at(action)}: ${ran.detail}`);
    if (ran.end === 'COMPLETED' && other !== undefined)
      judgeParamsMatter(ctx, at(action), [other, params], [before, await footprint(ctx, urn)]);
  }

  const last = await syncInputOf(ctx, urn);
  try {
    await steward.commands.remove(urn, AS);
  } catch (err) {
    book.fail('actions-plan', `${at('delete')}: refused: ${message(err)}`);
    book.skip('delete-converges', `${at('delete')} was refused`);
    return;
  }
  book.pass('actions-plan', `${at('delete')} planned`);
  const deleted = await converge(ctx, urn, 'delete', at('delete'));
  if (deleted.end !== 'DELETED') {
    book.fail(
      'delete-converges',
      `${at('delete')}: ${deleted.end === 'COMPLETED' ? 'sync returned COMPLETED but the resource was not removed' : deleted.detail}`,
    );
    return;
  }
  const keeps = keepsReason(example);
  const left = observes && last ? await stillThere(ctx, last, at('delete'), keeps) : false;
  await deleteAgain(ctx, deleted, at('delete'));
  if (observes && last) await checkObserveAfterDelete(ctx, last, at('delete'), keeps, left);
}

/**
 * Runs `action` with another example's params (`other`), before the example's own,
 * so rule 6 can compare what each left; what it left, or NOT_RUN when it did not
 * converge (rule 2 or 6 says why; the example's own run is then skipped, as the
 * resource is not settled).
 */
async function runWith(
  ctx: ConvergeContext,
  urn: string,
  action: string,
  other: unknown,
  at: (action: string) => string,
): Promise<unknown> {
  const label = `${at(action)} with another example's params`;
  const skipOwn = () => {
    ctx.book.skip('actions-converge', `${at(action)}: not run, the run before it did not end`);
    return NOT_RUN;
  };
  try {
    await ctx.steward.commands.execute(urn, action, other, AS);
  } catch (err) {
    ctx.book.fail('actions-plan', `${label}: refused: ${message(err)}`);
    return skipOwn();
  }
  ctx.secrets.rememberParams(action, other);
  const ran = await converge(ctx, urn, action, label);
  if (ran.end !== 'COMPLETED') {
    ctx.book.fail('actions-converge', `${label}: ${ran.detail}`);
    return skipOwn();
  }
  return footprint(ctx, urn);
}

/**
 * Why the example's delete keeps its backend object on purpose (`"delete": {"keeps":
 * "why"}` in its actions file: a server only forgotten, an orphaning config), or
 * undefined: then observe must say `exists: false` after the delete.
 */
function keepsReason(example: Example): string | undefined {
  const keeps = (example.params.delete as { keeps?: unknown } | undefined)?.keeps;
  return typeof keeps === 'string' && keeps ? keeps : undefined;
}

/**
 * Rule 7's second half: the whole delete again, from its first input, after the
 * backend was torn down (a crash after teardown, or a re-run by an operator)
 * must also complete: nothing the module can observe is left behind.
 */
async function deleteAgain(
  ctx: ConvergeContext,
  deleted: Convergence,
  label: string,
): Promise<void> {
  if (!deleted.firstInput) {
    ctx.book.pass('delete-converges', `${label}: ${deleted.detail}`);
    return;
  }
  let input: SyncInput = structuredClone(deleted.firstInput);
  for (let calls = 1; calls <= ctx.stepBudget; calls += 1) {
    let result;
    try {
      result = await syncOnce(ctx, input);
    } catch (err) {
      ctx.book.fail(
        'delete-converges',
        `${label}: ${deleted.detail}, but deleting again from the start threw: ${message(err)}`,
      );
      return;
    }
    if (result.status === 'COMPLETED') {
      ctx.book.pass(
        'delete-converges',
        `${label}: ${deleted.detail}; deleting again from the start completed in ${calls}`,
      );
      return;
    }
    const state = input.resource.state;
    input = {
      ...input,
      resource: {
        ...input.resource,
        state: {
          ...state,
          data: result.data === undefined ? state.data : result.data,
          output: result.output ?? state.output,
        },
      },
    };
  }
  ctx.book.fail(
    'delete-converges',
    `${label}: deleted once, but deleting again from the start was still PENDING after ${ctx.stepBudget} sync calls`,
  );
}
