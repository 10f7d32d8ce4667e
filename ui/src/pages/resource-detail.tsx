import { api } from '../api/client.js';
import { isDrifted, type Resource } from '../api/resource-types.js';
import { useLiveResource } from '../api/use-live-resource.js';
import { useLoaded } from '../api/use-loaded.js';
import { ErrorBanner } from '../components/error-banner.js';
import { LiveIndicator } from '../components/live-indicator.js';
import { ResourceActions } from '../components/resource-actions.js';
import { StatusBadge } from '../components/status-badge.js';
import { href, segmentsAfter } from '../router.js';
import type { PageProps } from './page-props.js';
import { DependenciesSection } from './resource/dependencies-section.js';
import { LogTail } from './resource/log-tail.js';
import { OperationsSection } from './resource/operations-section.js';
import { RevisionsSection } from './resource/revisions-section.js';
import { SchedulesSection } from './resource/schedules-section.js';
import { SpecSection } from './resource/spec-section.js';
import { StateSection } from './resource/state-section.js';

/**
 * One resource (`#/resources/{urn}`): spec, state, history, operations, logs,
 * schedules and dependencies, kept current by the events stream of its URN.
 */
export function ResourceDetailPage({ route, whoami }: PageProps) {
  const urn = segmentsAfter(route.path, '/resources')?.[0] ?? '';
  const live = useLiveResource(urn);
  const { resource, error, deleted, stream, changes } = live;
  return (
    <article aria-labelledby="resource-title">
      <p class="breadcrumbs">
        <a href={href('/resources', resource ? { project: resource.project } : undefined)}>
          Resources
        </a>
        {resource ? ` / ${resource.project} / ${resource.kind}` : null}
      </p>
      <div class="page-head">
        <h1 id="resource-title">{resource?.name ?? urn}</h1>
        <LiveIndicator state={stream} />
      </div>
      <p class="urn">
        <code>{urn}</code>
      </p>
      {deleted ? (
        <p class="notice" role="status">
          This resource was deleted (or does not exist); its history is kept.
        </p>
      ) : (
        <ErrorBanner error={error} title="The resource could not be read" />
      )}
      {resource && !deleted ? (
        <>
          <Summary resource={resource} />
          <ResourceActions resource={resource} whoami={whoami} onChanged={live.reload} />
          <div class="detail-grid">
            <SpecSection resource={resource} />
            <StateSection resource={resource} />
          </div>
          <DependenciesSection resource={resource} />
          <Logs resource={resource} />
        </>
      ) : resource === undefined && !error ? (
        <p class="loading">Loading…</p>
      ) : null}
      {urn ? (
        <>
          <RevisionsSection urn={urn} changes={changes} />
          <OperationsSection urn={urn} changes={changes} />
          {deleted ? null : <SchedulesSection urn={urn} changes={changes} />}
        </>
      ) : null}
    </article>
  );
}

/** The status at the top, with drift said in words (not colour alone). */
function Summary({ resource }: { resource: Resource }) {
  const { state } = resource;
  return (
    <p class="summary">
      <StatusBadge status={state.status} action={state.action} paused={state.paused} />
      {isDrifted(resource) ? <span class="badge badge-drift">drifted</span> : null}
      {state.sync.last_error ? <span class="last-error"> {state.sync.last_error}</span> : null}
    </p>
  );
}

/** The log tail, for a kind whose module has logs (GET /modules/{kind} says). */
function Logs({ resource }: { resource: Resource }) {
  const { data } = useLoaded(
    (signal) =>
      api.GET('/api/v1beta1/modules/{kind}', {
        // Typed with the built-in kinds only; a user module's kind is read the same way.
        params: { path: { kind: resource.kind as 'file' } },
        signal,
      }),
    [resource.kind],
  );
  return data?.has_logs ? <LogTail urn={resource.urn} /> : null;
}
