import type { Operation } from '../api/resource-types.js';
import { ago, when } from '../format.js';

/** An operation's outcome as a badge, with its error under it: the activity feed and a resource's operations. */
export function OperationStatusCell({ operation }: { operation: Operation }) {
  return (
    <td>
      <span class={`badge badge-op-${operation.status}`}>{operation.status}</span>
      {operation.error ? <div class="last-error">{operation.error}</div> : null}
    </td>
  );
}

/** When the operation was accepted: "3 min ago", the exact time on hover and for machines. */
export function AcceptedCell({ operation }: { operation: Operation }) {
  return (
    <td>
      <time dateTime={operation.created_at} title={when(operation.created_at)}>
        {ago(operation.created_at)}
      </time>
    </td>
  );
}
