import { api } from '../../api/client.js';
import type { Operation } from '../../api/resource-types.js';
import { useLoaded } from '../../api/use-loaded.js';
import { ErrorBanner } from '../../components/error-banner.js';
import { AcceptedCell, OperationStatusCell } from '../../components/operation-cells.js';
import { TableScroll } from '../../components/table-scroll.js';

const OPERATIONS_READ = 50;

/** The resource's operations, newest first: outcome, attempts, and how long each waited and ran. */
export function OperationsSection({ urn, changes }: { urn: string; changes: number }) {
  const { data, error } = useLoaded(
    (signal) =>
      api.GET('/api/v1beta1/operations', {
        params: { query: { urn, page_size: OPERATIONS_READ } },
        signal,
      }),
    [urn, changes],
  );
  const operations = data?.operations;
  return (
    <section aria-labelledby="operations-title" class="panel">
      <h2 id="operations-title">Operations</h2>
      <ErrorBanner error={error} title="The operations could not be read" />
      {operations === undefined ? (
        <p class="loading">Loading…</p>
      ) : operations.length === 0 ? (
        <p>No operations.</p>
      ) : (
        <TableScroll label="Operations of this resource, newest first">
          <table>
            <caption class="visually-hidden">Operations of this resource, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Action</th>
                <th scope="col">Outcome</th>
                <th scope="col">Version</th>
                <th scope="col">Attempts</th>
                <th scope="col">By</th>
                <th scope="col">Accepted</th>
                <th scope="col">Waited</th>
                <th scope="col">Ran</th>
              </tr>
            </thead>
            <tbody>
              {operations.map((operation) => (
                <OperationRow key={operation.id} operation={operation} />
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </section>
  );
}

function OperationRow({ operation }: { operation: Operation }) {
  return (
    <tr data-operation={operation.id}>
      <th scope="row">{operation.action}</th>
      <OperationStatusCell operation={operation} />
      <td>{operation.version}</td>
      <td>{operation.attempts}</td>
      <td>{operation.created_by}</td>
      <AcceptedCell operation={operation} />
      <td>{between(operation.created_at, operation.started_at)}</td>
      <td>{between(operation.started_at, operation.finished_at)}</td>
    </tr>
  );
}

/** The time from one instant to another, or a dash while the second has not come. */
function between(start: string | null, end: string | null): string {
  if (!start || !end) return '—';
  const ms = Date.parse(end) - Date.parse(start);
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 60_000)} min`;
}
