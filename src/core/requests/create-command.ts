import { AlreadyExistsError } from '../errors.js';
import { newOperationId } from '../ids.js';
import type { RegisteredModule } from '../modules/registry.js';
import { formatUrn } from '../names.js';
import type { ResourceReads } from '../ports.js';
import { expirySchedule } from '../schedules/schedule-commands.js';
import { retryOnConflict } from './accept-change.js';
import type { ChangeAttemptDeps } from './change-attempts.js';
import { claimKeyOf } from './claims.js';
import type { Accepted, CreateRequest, RequestOptions } from './command-types.js';
import { eventFor, newOperation, newResource, revisionOf } from './documents.js';
import { asImport, policyOf, requireObserve } from './observe-requests.js';
import { applyPlan, runPlan, validatedConfigs } from './planning.js';

/** What change-attempts.ts is given, with the store's read of a URN (is it in use?). */
export type CreateCommandDeps = Omit<ChangeAttemptDeps, 'store'> & {
  store: Pick<ResourceReads, 'findResource'>;
};

/**
 * `POST /resources`: the body's own fields checked, planned as a create, committed with its
 * operation, revision and events (accept-change.ts). Every request on a resource that exists is
 * planned by change-attempts.ts.
 */
export function createCreateCommand({
  store,
  registry,
  clock,
  resolveForPlan,
  acceptance,
}: CreateCommandDeps) {
  const { commit, quotaOf } = acceptance;

  /** A create lost a race with a concurrent change of a dependency: look again (and answer what it is now). */
  function create(request: CreateRequest, options: RequestOptions): Promise<Accepted> {
    let attempts = 0;
    return retryOnConflict(formatUrn(request), () => createOnce(request, options, attempts++ > 0));
  }

  async function createOnce(
    request: CreateRequest,
    options: RequestOptions,
    retrying: boolean,
  ): Promise<Accepted> {
    const module = registry.get(request.kind);
    const urn = formatUrn(request);
    // Checked first, as every field of the body is: a bad end date is a 400 even for a name in use.
    const expiry =
      request.expiresAt === undefined
        ? undefined
        : expirySchedule(
            { urn, project: request.project },
            request.expiresAt,
            options.actor,
            clock(),
          );
    const policy = policyOf(request.policy);
    const refuseTaken = async () => {
      if (await store.findResource(urn))
        throw new AlreadyExistsError(`resource ${urn} already exists`, { urn });
    };
    // A name in use is refused before anything else of the body is checked. A create that will be
    // written looks only when something refuses it: its insert writes nothing on a name in use (commit
    // then answers 409 too), so the common create, a new name, is spared a read (docs/decisions.md).
    const lookFirst = retrying || options.dryRun === true;
    if (lookFirst) await refuseTaken();
    try {
      return await planCreate(request, options, { module, expiry, policy });
    } catch (err) {
      // A look that fails (the database gone) leaves the create's own error to be answered.
      if (!lookFirst)
        await refuseTaken().catch((looked: unknown) => {
          if (looked instanceof AlreadyExistsError) throw looked;
        });
      throw err;
    }
  }

  /** A create's plan and commit, once its body's own fields are checked. */
  async function planCreate(
    request: CreateRequest,
    options: RequestOptions,
    checked: {
      module: RegisteredModule;
      expiry: ReturnType<typeof expirySchedule> | undefined;
      policy: ReturnType<typeof policyOf>;
    },
  ): Promise<Accepted> {
    const { module, expiry, policy } = checked;
    const importing = request.import === true || policy.mode === 'observe';
    if (importing) requireObserve(module, 'import');
    const configs = validatedConfigs(module, request.configs ?? {});
    const dependencies = request.dependencies ?? {};
    const resolved = await resolveForPlan(module, request.project, dependencies);
    const now = clock();
    const created = newResource(
      request,
      { configs, dependencies, policy },
      request.labels ?? {},
      newOperationId(now.getTime()),
      options.actor,
      now,
    );
    // An import is planned as a create (plan validates it the same way); `desired.state.action`
    // tells a plan that must allow what only an import may (postgres_server without host).
    const desired = importing
      ? { ...created, state: { ...created.state, action: 'import' } }
      : created;
    const plan = await runPlan(module, {
      action: 'create',
      params: {},
      current: null,
      desired,
      dependencies: resolved,
      now,
    });
    const planned = applyPlan(module, null, desired, plan);
    const resource = importing ? asImport(planned) : planned;
    const action = resource.state.action;
    const operation = newOperation(resource, action, {}, options.actor, now);
    const events = [
      eventFor(resource, 'resource.created', operation.id, {
        version: 1,
        ...(importing && { import: true }),
      }),
      eventFor(resource, 'operation.created', operation.id, { action }),
    ];
    const revision = revisionOf(null, resource, operation, registry);
    const change = {
      resource,
      expected: null,
      nextSyncAtMs: now.getTime(),
      operation,
      reindex: true,
      claimKey: claimKeyOf(module, resource),
      events,
      schedules: expiry && [expiry],
      revision,
      quota: quotaOf(module, resource),
    };
    return commit(change, options);
  }

  return create;
}
