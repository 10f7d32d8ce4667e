import type { RequestOptions } from '../core/requests/resource-commands.js';
import type { SyncInput } from '../sdk/index.js';
import { converge, type ConvergeContext, type Convergence, message, syncOnce } from './converge.js';
import { syncInputOf } from './direct-calls.js';
import type { Example } from './examples.js';
import { checkNoTakeover } from './no-takeover.js';
import { checkObserveAfterCreate, checkObserveAfterDelete, hasObserve } from './observe-rules.js';
import { OBSERVE_RULES } from './rules.js';

const AS: RequestOptions = { actor: 'contract-kit' };
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
  await deleteAgain(ctx, deleted, at('delete'));
  if (observes && last) await checkObserveAfterDelete(ctx, last, at('delete'));
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
