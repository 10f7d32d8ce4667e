import {
  dependencyUrns,
  listProjectResources,
  PROJECT_LIMIT,
} from '../../api/project-resources.js';
import type { Resource } from '../../api/resource-types.js';
import { useLoaded } from '../../api/use-loaded.js';
import { ErrorBanner } from '../../components/error-banner.js';
import { StatusBadge } from '../../components/status-badge.js';
import { resourceHref } from '../../format.js';

/**
 * What the resource depends on (its spec, by dependency name) and what depends on
 * it: the resources of its project whose dependencies name it (dependencies stay
 * within a project), each a link to its page.
 */
export function DependenciesSection({ resource }: { resource: Resource }) {
  const { urn, project } = resource;
  const { data, error } = useLoaded(
    (signal) => listProjectResources(project, signal),
    [urn, project],
  );
  const dependencies = Object.entries(resource.spec.dependencies);
  const dependents = data?.resources.filter((other) => dependencyUrns(other).includes(urn));
  const status = new Map(data?.resources.map((other) => [other.urn, other]));
  return (
    <section aria-labelledby="dependencies-title" class="panel">
      <h2 id="dependencies-title">Dependencies</h2>
      <h3 id="depends-on-title">Depends on</h3>
      {dependencies.length === 0 ? (
        <p>Nothing.</p>
      ) : (
        <ul class="links" aria-labelledby="depends-on-title">
          {dependencies.map(([name, target]) => (
            <li key={name}>
              {name}: <a href={resourceHref(target)}>{target}</a> <Status of={status.get(target)} />
            </li>
          ))}
        </ul>
      )}
      <h3 id="dependents-title">Dependents</h3>
      <ErrorBanner error={error} title="The dependents could not be read" />
      {dependents === undefined ? (
        error ? null : (
          <p class="loading">Loading…</p>
        )
      ) : dependents.length === 0 ? (
        <p>Nothing depends on it.</p>
      ) : (
        <ul class="links" aria-labelledby="dependents-title">
          {dependents.map((other) => (
            <li key={other.urn}>
              <a href={resourceHref(other.urn)}>{other.urn}</a> <Status of={other} />
            </li>
          ))}
        </ul>
      )}
      {data?.truncated ? (
        <p class="hint">Only the first {PROJECT_LIMIT} resources of the project were looked at.</p>
      ) : null}
    </section>
  );
}

function Status({ of }: { of: Resource | undefined }) {
  return of ? (
    <StatusBadge status={of.state.status} action={of.state.action} paused={of.state.paused} />
  ) : null;
}
