import { isDrifted, pendingSteps, type Resource } from '../api/resource-types.js';
import { ago, resourceHref, when } from '../format.js';
import { StatusBadge } from './status-badge.js';
import { TableScroll } from './table-scroll.js';

/** The resources of one page: each row links to the resource's page. */
export function ResourceTable({
  rows,
  deleted,
}: {
  rows: readonly Resource[];
  deleted: ReadonlySet<string>;
}) {
  return (
    // Scrolls sideways on a phone rather than squeezing the columns.
    <TableScroll label="Resources">
      <table class="resources">
        <caption class="visually-hidden">Resources</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Kind</th>
            <th scope="col">Project</th>
            <th scope="col">Status</th>
            <th scope="col">Labels</th>
            <th scope="col">Last error</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((resource) => (
            <ResourceRow key={resource.urn} resource={resource} gone={deleted.has(resource.urn)} />
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function ResourceRow({ resource, gone }: { resource: Resource; gone: boolean }) {
  const { state } = resource;
  return (
    <tr class={gone ? 'row-deleted' : undefined} data-urn={resource.urn}>
      <th scope="row">
        <a href={resourceHref(resource.urn)}>{resource.name}</a>
        {gone ? <span class="badge badge-paused"> deleted</span> : null}
      </th>
      <td>{resource.kind}</td>
      <td>{resource.project}</td>
      <td>
        <StatusBadge status={state.status} action={state.action} paused={state.paused} />
        {isDrifted(resource) ? <span class="badge badge-drift">drifted</span> : null}
        {state.status === 'PENDING' ? <Progress resource={resource} /> : null}
      </td>
      <td>
        <Labels labels={resource.labels} />
      </td>
      <td class="last-error">{state.sync.last_error ?? ''}</td>
      <td>
        <time dateTime={resource.updated_at} title={when(resource.updated_at)}>
          {ago(resource.updated_at)}
        </time>
      </td>
    </tr>
  );
}

/** A transitional resource's way to done: the steps left, what it waits on, the failed attempts. */
function Progress({ resource }: { resource: Resource }) {
  const steps = pendingSteps(resource);
  const { attempts, waiting_on: waitingOn } = resource.state.sync;
  return (
    <ul class="progress">
      {steps.length > 0 ? (
        <li>
          {steps.length} {steps.length === 1 ? 'step' : 'steps'} left: {steps.join(' → ')}
        </li>
      ) : null}
      {waitingOn?.length ? <li>waiting on {waitingOn.join(', ')}</li> : null}
      {attempts > 0 ? <li>attempt {attempts + 1}</li> : null}
    </ul>
  );
}

function Labels({ labels }: { labels: Record<string, string> }) {
  const entries = Object.entries(labels);
  if (entries.length === 0) return null;
  return (
    <ul class="labels">
      {entries.map(([key, value]) => (
        <li key={key}>
          {key}={value}
        </li>
      ))}
    </ul>
  );
}
