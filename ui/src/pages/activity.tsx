import type { StewardEvent } from '../api/event-stream.js';
import type { Operation } from '../api/resource-types.js';
import { useLiveActivity } from '../api/use-live-activity.js';
import { ErrorBanner } from '../components/error-banner.js';
import { LiveIndicator } from '../components/live-indicator.js';
import { AcceptedCell, OperationStatusCell } from '../components/operation-cells.js';
import { TableScroll } from '../components/table-scroll.js';
import { ago, resourceHref, when } from '../format.js';
import type { PageProps } from './page-props.js';

/** Operations and events across the projects the caller may see, live. */
export function ActivityPage(_props: PageProps) {
  const { operations, events, error, stream } = useLiveActivity();
  return (
    <section aria-labelledby="activity-title">
      <h1 id="activity-title">Activity</h1>
      <LiveIndicator state={stream} />
      <ErrorBanner error={error} title="The operations could not be listed" />
      <div class="activity">
        <section aria-labelledby="events-title">
          <h2 id="events-title">Events</h2>
          {events.length === 0 ? (
            <p class="hint">
              No events since this page was opened. They appear here as they happen.
            </p>
          ) : (
            <ol class="feed" aria-label="Events, newest first">
              {events.map((event) => (
                <EventItem key={event.id} event={event} />
              ))}
            </ol>
          )}
        </section>
        <section aria-labelledby="operations-title">
          <h2 id="operations-title">Operations</h2>
          {operations === undefined ? (
            <p class="loading">Loading…</p>
          ) : operations.length === 0 ? (
            <p>No operations yet.</p>
          ) : (
            <OperationTable operations={operations} />
          )}
        </section>
      </div>
    </section>
  );
}

function EventItem({ event }: { event: StewardEvent }) {
  const data = event.data as { from?: string; to?: string; error?: string | null };
  return (
    <li>
      <time dateTime={event.created_at} title={when(event.created_at)}>
        {ago(event.created_at)}
      </time>{' '}
      <strong>{event.type}</strong> <a href={resourceHref(event.urn)}>{event.urn}</a>
      {data.to ? (
        <span>
          {' '}
          {data.from ?? '—'} → {data.to}
        </span>
      ) : null}
      {data.error ? <span class="last-error"> {data.error}</span> : null}
    </li>
  );
}

function OperationTable({ operations }: { operations: readonly Operation[] }) {
  return (
    <TableScroll label="Operations, newest first">
      <table>
        <caption class="visually-hidden">Operations, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Resource</th>
            <th scope="col">Action</th>
            <th scope="col">Status</th>
            <th scope="col">By</th>
            <th scope="col">Started</th>
            <th scope="col">Took</th>
          </tr>
        </thead>
        <tbody>
          {operations.map((operation) => (
            <tr key={operation.id} data-operation={operation.id}>
              <th scope="row">
                <a href={resourceHref(operation.urn)}>{operation.urn}</a>
              </th>
              <td>{operation.action}</td>
              <OperationStatusCell operation={operation} />
              <td>{operation.created_by}</td>
              <AcceptedCell operation={operation} />
              <td>{took(operation)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function took(operation: Operation): string {
  if (!operation.started_at || !operation.finished_at) return '—';
  const ms = Date.parse(operation.finished_at) - Date.parse(operation.started_at);
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
