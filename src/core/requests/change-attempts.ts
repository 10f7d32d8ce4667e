import { InvalidRequestError, InvalidStateError } from '../errors.js';
import { newOperationId } from '../ids.js';
import type { RegisteredModule, Registry } from '../modules/registry.js';
import type { ResourceReads } from '../ports.js';
import type { OpenedSecrets } from '../secrets/sealing-store.js';
import { refuseMovedSecrets } from '../secrets/secret-bindings.js';
import { type Acceptance, expectedOf } from './accept-change.js';
import type { Attempt, RequestOptions, UpdateRequest } from './command-types.js';
import type { resolveDependencies } from './dependencies.js';
import { eventFor, newOperation, pendingFor } from './documents.js';
import { policyOf, refuseObserveModeAction, requireObserve } from './observe-requests.js';
import { keepOmittedSecrets, validatedConfigs, validatedParams } from './planning.js';
import { removalAction, type RemovalOptions } from './removal.js';
import { operationView, resourceView } from './views.js';

export interface ChangeAttemptDeps {
  store: Pick<ResourceReads, 'findOperation' | 'findDependents'> &
    Pick<OpenedSecrets, 'unreadableSecretsOf'>;
  registry: Registry;
  clock: () => Date;
  /** The dependencies as plan sees them (resource-commands.ts). */
  resolveForPlan: (
    module: RegisteredModule,
    project: string,
    requested: Record<string, string>,
    removing?: boolean,
  ) => ReturnType<typeof resolveDependencies>;
  acceptance: Acceptance;
}

/**
 * How each request on a resource that exists is planned from it as read (an `Attempt`,
 * command-types.ts): PATCH, a module action, a delete or orphan, a refresh and a retry.
 * resource-commands.ts runs them with the read, If-Match and transition checks around them
 * (`withRetries`), or on a resource already read (`prepared`).
 */
export function createChangeAttempts({
  store,
  registry,
  clock,
  resolveForPlan,
  acceptance,
}: ChangeAttemptDeps) {
  function planUpdate(request: UpdateRequest, options: RequestOptions): Attempt {
    return async (current, module) => {
      const configs =
        request.configs === undefined
          ? current.spec.configs
          : validatedConfigs(
              module,
              keepOmittedSecrets(module, current.spec.configs, request.configs),
            );
      const dependencies = request.dependencies ?? current.spec.dependencies;
      const policy = request.policy ? policyOf(request.policy) : current.spec.policy;
      if (policy.mode === 'observe') requireObserve(module, 'be observed');
      refuseMovedSecrets(module.definition, {
        before: current.spec,
        after: { configs, dependencies },
        sent: new Set(Object.keys(request.configs ?? {})),
        stored: new Set([
          ...Object.keys(current.spec.configs),
          ...store
            .unreadableSecretsOf(current)
            .map((secret) => secret.pointer.replace(/^\/spec\/configs\//, '')),
        ]),
      });
      const resolved = await resolveForPlan(module, current.project, dependencies);
      const now = clock();
      const base = pendingFor(current, 'update', newOperationId(now.getTime()), options.actor, now);
      const desired = {
        ...base,
        labels: request.labels ?? current.labels,
        spec: { configs, dependencies, policy },
      };
      return acceptance.planned(module, current, desired, 'update', {}, resolved, now, options);
    };
  }

  function planExecute(action: string, params: unknown, options: RequestOptions): Attempt {
    return async (current, module) => {
      refuseObserveModeAction(current, action);
      const validParams = validatedParams(module, action, params);
      const resolved = await resolveForPlan(module, current.project, current.spec.dependencies);
      const { now, desired } = acceptance.pendingNow(current, action, options);
      return acceptance.planned(
        module,
        current,
        desired,
        action,
        validParams,
        resolved,
        now,
        options,
      );
    };
  }

  function planRemove(options: RequestOptions, removal: RemovalOptions = {}): Attempt {
    return async (current, module) => {
      const urn = current.urn;
      const action = removalAction(current, removal);
      if (current.state.status === 'PENDING' && current.state.action === action) {
        const running = await store.findOperation(current.state.operation_id);
        if (running)
          return {
            answer: {
              resource: resourceView(current, registry),
              operation: operationView(running, registry),
              dryRun: Boolean(options.dryRun),
            },
          };
      }
      const dependents = (await store.findDependents(urn)).filter(
        (dependent) => !removal.cascadeWith?.has(dependent),
      );
      if (dependents.length) {
        throw new InvalidStateError(
          `cannot delete ${urn}: ${dependents.join(', ')} depend${dependents.length === 1 ? 's' : ''} on it`,
          { dependents },
        );
      }
      // An orphan plans nothing: the module is never asked about it.
      const resolved =
        action === 'orphan'
          ? {}
          : await resolveForPlan(module, current.project, current.spec.dependencies, true);
      const { now, desired } = acceptance.pendingNow(current, action, options);
      return acceptance.planned(module, current, desired, action, {}, resolved, now, options);
    };
  }

  function planRefresh(options: RequestOptions): Attempt {
    return async (current, module) => {
      requireObserve(module, 'refresh');
      const now = clock();
      const id = newOperationId(now.getTime());
      const resource = pendingFor(current, 'refresh', id, options.actor, now);
      const operation = newOperation(resource, 'refresh', {}, options.actor, now);
      const events = [
        eventFor(resource, 'resource.status_changed', id, {
          from: current.state.status,
          to: 'PENDING',
          action: 'refresh',
        }),
        eventFor(resource, 'operation.created', id, { action: 'refresh' }),
      ];
      const change = { resource, expected: expectedOf(current), current, operation, events };
      return { change: { ...change, nextSyncAtMs: now.getTime(), reindex: false } };
    };
  }

  function planRetry(options: RequestOptions): Attempt {
    return async (current) => {
      const previous = await store.findOperation(current.state.operation_id);
      const now = clock();
      const resource = pendingFor(
        current,
        current.state.action,
        newOperationId(now.getTime()),
        options.actor,
        now,
      );
      const operation = newOperation(
        resource,
        current.state.action,
        previous?.params ?? {},
        options.actor,
        now,
      );
      const events = [
        eventFor(resource, 'resource.status_changed', operation.id, {
          from: current.state.status,
          to: 'PENDING',
          action: operation.action,
        }),
        eventFor(resource, 'operation.created', operation.id, {
          action: operation.action,
          retry_of: current.state.operation_id,
        }),
      ];
      return {
        change: {
          resource,
          expected: expectedOf(current),
          current,
          nextSyncAtMs: now.getTime(),
          operation,
          reindex: false,
          events,
        },
      };
    };
  }

  return {
    update: planUpdate,
    execute: planExecute,
    remove: planRemove,
    refresh: planRefresh,
    retry: planRetry,
  };
}

/** `create` and `update` are requests of their own, not actions to execute. */
export function refuseNotExecuted(action: string): void {
  if (action === 'create' || action === 'update') {
    throw new InvalidRequestError(
      `action "${action}" is not executed: use ${action === 'create' ? 'POST /resources' : 'PATCH /resources/{urn}'}`,
    );
  }
}
