import { InvalidStateError } from '../errors.js';
import { FINAL_OPERATION_STATUSES, type Operation } from '../model.js';
import type { Store } from '../ports.js';
import { expectedOf } from './accept-change.js';
import { eventFor } from './documents.js';
import type { Queries } from './queries.js';
import { ALL_PROJECTS, type ProjectScope } from './scope.js';

export interface OperationCommandDeps {
  store: Store;
  clock: () => Date;
  /** Finds the operation within the caller's scope, and answers its view. */
  queries: Pick<Queries, 'getOperation'>;
}

/**
 * The write side for operations: cancel. Unlike the resource commands it does not wake
 * the sync worker: a cancelled resource is in ERROR with no next sync, so nothing became
 * due (a worker holding its lease learns at the next heartbeat that the operation is gone).
 */
export function createOperationCommands({ store, clock, queries }: OperationCommandDeps) {
  /**
   * Queued or running → cancelled; the resource goes to ERROR ("cancelled"). A cancel of an
   * operation that is already cancelled (repeated, raced, or superseded) has what it asked for:
   * the operation as it is, nothing written.
   */
  async function cancelOperation(
    id: string,
    actor: string,
    scope: ProjectScope = ALL_PROJECTS,
  ): Promise<Operation> {
    const operation = await queries.getOperation(id, scope);
    if (operation.status === 'cancelled') return operation;
    if (FINAL_OPERATION_STATUSES.includes(operation.status)) {
      throw new InvalidStateError(`operation ${id} is already ${operation.status}`, {
        id,
        status: operation.status,
      });
    }
    const resource = await store.findResource(operation.urn);
    if (!resource || resource.state.operation_id !== id || resource.state.status !== 'PENDING') {
      throw new InvalidStateError(`operation ${id} is no longer the resource's current operation`, {
        id,
      });
    }
    const error = `cancelled by ${actor}`;
    const outcome = await store.commitCancel({
      urn: resource.urn,
      expected: expectedOf(resource),
      operationId: id,
      error,
      nowIso: clock().toISOString(),
      events: [
        eventFor(resource, 'operation.cancelled', id, { reason: error }),
        eventFor(resource, 'resource.status_changed', id, {
          from: 'PENDING',
          to: 'ERROR',
          action: resource.state.action,
        }),
      ],
    });
    if (outcome === 'conflict') {
      const now = await queries.getOperation(id, scope);
      if (now.status === 'cancelled') return now; // another cancel (or a newer request) got there first
      throw new InvalidStateError(
        `operation ${id} finished or changed while it was being cancelled`,
        { id },
      );
    }
    return queries.getOperation(id);
  }

  return { cancelOperation };
}

export type OperationCommands = ReturnType<typeof createOperationCommands>;
