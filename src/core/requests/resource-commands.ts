import { NotFoundError } from '../errors.js';
import type { Resource } from '../model.js';
import type { RegisteredModule, Registry } from '../modules/registry.js';
import { parseUrn } from '../names.js';
import type { AcceptWrites, ResourceReads } from '../ports.js';
import type { OpenedSecrets } from '../secrets/sealing-store.js';
import { checkIfMatch, createAcceptance, retryOnConflict } from './accept-change.js';
import { type CascadeAccepted, cascadeRemove } from './cascade.js';
import { createChangeAttempts, refuseNotExecuted } from './change-attempts.js';
import type { Accepted, Attempt, Planned, RequestOptions, UpdateRequest } from './command-types.js';
import { createCreateCommand } from './create-command.js';
import { resolveDependencies } from './dependencies.js';
import { createPauseCommands } from './pause-commands.js';
import { NO_QUOTAS, type Quotas } from './quotas.js';
import type { RemovalOptions } from './removal.js';
import type { ProjectScope } from './scope.js';
import { assertTransition, type UserRequest } from './transitions.js';

export interface CommandDeps {
  /**
   * The sealing store (sealing-store.ts): resources come with their secrets opened and what is
   * committed is sealed. A commit makes the store signal the workers (StoreSignals).
   */
  store: ResourceReads & AcceptWrites & OpenedSecrets;
  registry: Registry;
  clock: () => Date;
  /** STEWARD_QUOTA_* and STEWARD_REVISION_RETENTION. @default NO_QUOTAS */
  quotas?: Quotas;
  /** STEWARD_OPERATION_DEADLINE_MS: an operation's deadline when its policy sets none. @default none */
  operationDeadlineMs?: number;
}

/**
 * The write side of the API: validate, check the transition, plan, and commit
 * resource, revision, operation and events in one transaction. A create is planned by
 * create-command.ts; every request on a resource that exists by change-attempts.ts, inside
 * `withRetries` (the read, If-Match, the transition), and committed by accept-change.ts.
 */
export function createResourceCommands({
  store,
  registry,
  clock,
  quotas = NO_QUOTAS,
  operationDeadlineMs,
}: CommandDeps) {
  /** The dependencies as plan sees them: the store opened their secret outputs (one that does not open is left out). */
  const resolveForPlan = (
    module: RegisteredModule,
    project: string,
    requested: Record<string, string>,
    removing = false,
  ) => resolveDependencies(store, module, project, requested, removing);
  const acceptance = createAcceptance({ store, registry, clock, quotas, operationDeadlineMs });
  const { commit, withOperationDeadline } = acceptance;
  const attempts = createChangeAttempts({ store, registry, clock, resolveForPlan, acceptance });
  const create = createCreateCommand({ store, registry, clock, resolveForPlan, acceptance });

  /** PATCH: each part given replaces the stored one. */
  function update(urn: string, request: UpdateRequest, options: RequestOptions): Promise<Accepted> {
    return withRetries(urn, 'update', options, attempts.update(request, options));
  }

  /** A module action (`POST .../execute` or `.../actions/{action}`). */
  function execute(
    urn: string,
    action: string,
    params: unknown,
    options: RequestOptions,
  ): Promise<Accepted> {
    if (action === 'delete') return remove(urn, options);
    refuseNotExecuted(action);
    return withRetries(urn, 'action', options, attempts.execute(action, params, options));
  }

  /**
   * Allowed from any status; a running operation is cancelled as superseded. An orphan (asked for,
   * or the resource's policy: removal.ts) is a delete that forgets the record and keeps the backend.
   */
  function remove(
    urn: string,
    options: RequestOptions,
    removal: RemovalOptions = {},
  ): Promise<Accepted> {
    return withRetries(
      urn,
      removal.orphan ? 'orphan' : 'delete',
      options,
      attempts.remove(options, removal),
    );
  }

  /** `DELETE ?cascade=true`: every dependent first, leaves first, then `urn` (cascade.ts). */
  function removeCascade(
    urn: string,
    options: RequestOptions,
    removal: Pick<RemovalOptions, 'orphan'>,
    scope: ProjectScope,
  ): Promise<CascadeAccepted<Accepted>> {
    return cascadeRemove(
      store,
      urn,
      scope,
      (target, dryRun, cascadeWith) =>
        remove(
          target,
          // Each delete of the tree is its own commit: the key is recorded once, with the whole answer.
          {
            ...options,
            dryRun,
            ifMatch: target === urn ? options.ifMatch : undefined,
            idempotency: undefined,
          },
          { ...removal, cascadeWith },
        ),
      Boolean(options.dryRun),
    );
  }

  /** `POST .../refresh`: the worker reads the backend (`observe`) and writes `state.drift`; the spec stays. */
  function refresh(urn: string, options: RequestOptions): Promise<Accepted> {
    return withRetries(urn, 'refresh', options, attempts.refresh(options));
  }

  /** ERROR → PENDING: the same action and params again, as a new operation. */
  function retry(urn: string, options: RequestOptions): Promise<Accepted> {
    return withRetries(urn, 'retry', options, attempts.retry(options));
  }

  /**
   * Reads, checks If-Match and the transition, runs `attempt`; re-reads when the compare-and-set lost a race.
   * `attempt` sees the stored resource with its secrets opened (so plan, PATCH's kept secrets and the
   * "did anything change" comparison work on values, not on ciphertexts); the secrets that do not open
   * are left out, and the store puts them back when the change planned from it is committed.
   */
  async function withRetries(
    urn: string,
    request: UserRequest,
    options: RequestOptions,
    attempt: Attempt,
  ): Promise<Accepted> {
    parseUrn(urn);
    return retryOnConflict(urn, async () => {
      const current = await store.findResource(urn);
      if (!current) throw new NotFoundError(`resource ${urn} does not exist`, { urn });
      checkIfMatch(current, options.ifMatch);
      const step = await attempt(current, checkedModule(current, request));
      return 'answer' in step ? step.answer : commit(step.change, options);
    });
  }

  /** Checks the transition; the module that plans `request` on `current`. */
  function checkedModule(current: Resource, request: UserRequest): RegisteredModule {
    if (!(request === 'delete' && current.state.action === 'delete'))
      assertTransition(request, current.state.status, current.urn);
    // An orphan never asks the module (no plan, no claim key, no footprint): a resource whose
    // kind is no longer loaded can still be let go, so nothing is stuck forever.
    const module = request === 'orphan' ? registry.find(current.kind) : registry.get(current.kind);
    return module as RegisteredModule;
  }

  /**
   * A request planned from `current` (a resource the caller read) as `withRetries` plans it, and
   * not committed: the change the commands would commit, deadline set, or the answer that needs
   * no commit. A scheduler's batch of firings commits the changes together (firing-batch.ts);
   * `current` must come from this store (sealingStore: its secrets opened).
   */
  async function prepare(
    current: Resource,
    request: UserRequest,
    attempt: Attempt,
  ): Promise<Planned> {
    const step = await attempt(current, checkedModule(current, request));
    return 'answer' in step ? step : { change: withOperationDeadline(step.change) };
  }

  /** `update`, `execute`, `remove` and `retry` on a resource already read, planned and not committed (`prepare`). */
  const prepared = {
    update: (current: Resource, request: UpdateRequest, options: RequestOptions) =>
      prepare(current, 'update', attempts.update(request, options)),
    execute(current: Resource, action: string, params: unknown, options: RequestOptions) {
      if (action === 'delete') return prepared.remove(current, options);
      refuseNotExecuted(action);
      return prepare(current, 'action', attempts.execute(action, params, options));
    },
    remove: (current: Resource, options: RequestOptions) =>
      prepare(current, 'delete', attempts.remove(options)),
    retry: (current: Resource, options: RequestOptions) =>
      prepare(current, 'retry', attempts.retry(options)),
  };

  return {
    create,
    update,
    execute,
    remove,
    removeCascade,
    retry,
    refresh,
    prepared,
    ...createPauseCommands({ store, registry, clock }),
  };
}

export type ResourceCommands = ReturnType<typeof createResourceCommands>;
