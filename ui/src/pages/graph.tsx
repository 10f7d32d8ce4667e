import { PROJECT_LIMIT } from '../api/project-resources.js';
import { ErrorBanner } from '../components/error-banner.js';
import { LiveIndicator } from '../components/live-indicator.js';
import { resourceHref } from '../format.js';
import { GraphView } from '../graph/graph-view.js';
import { statusText } from '../graph/layout.js';
import { ProjectPicker } from '../graph/project-picker.js';
import { useProjectGraph } from '../graph/use-project-graph.js';
import { navigate } from '../router.js';
import type { PageProps } from './page-props.js';

/**
 * A project's resources and their dependencies as a picture (`#/graph?project=a`),
 * laid out by dagre, each node a link to its resource; the same edges as a list
 * for a screen reader or a keyboard user who prefers text.
 */
export function GraphPage({ route, whoami }: PageProps) {
  const project = route.query.get('project') ?? '';
  const { layout, truncated, error, stream } = useProjectGraph(project);
  return (
    <section aria-labelledby="graph-title">
      <div class="page-head">
        <h1 id="graph-title">Dependency graph{project ? ` of ${project}` : ''}</h1>
        {project ? <LiveIndicator state={stream} /> : null}
      </div>
      <ProjectPicker
        whoami={whoami}
        project={project}
        onPick={(next) => navigate('/graph', next ? { project: next } : undefined)}
      />
      {!project ? (
        <p>Pick a project to draw its resources and their dependencies.</p>
      ) : (
        <>
          <ErrorBanner error={error} title="The project's resources could not be read" />
          {truncated ? (
            <p class="notice">Only the first {PROJECT_LIMIT} resources of the project are drawn.</p>
          ) : null}
          {layout === undefined ? (
            error ? null : (
              <p class="loading">Loading…</p>
            )
          ) : layout.nodes.length === 0 ? (
            <p>Project {project} has no resources.</p>
          ) : (
            <>
              <p class="hint">
                An arrow goes from a resource to one it depends on. Colour and text both say the
                status; each box opens its resource.
              </p>
              <GraphView layout={layout} project={project} />
              <EdgeList layout={layout} />
            </>
          )}
        </>
      )}
    </section>
  );
}

function EdgeList({
  layout,
}: {
  layout: NonNullable<ReturnType<typeof useProjectGraph>['layout']>;
}) {
  const names = new Map(layout.nodes.map((node) => [node.resource.urn, node.resource]));
  return (
    <details class="edge-list">
      <summary>The graph as a list</summary>
      <ul aria-label="Resources and what they depend on">
        {layout.nodes.map(({ resource }) => {
          const targets = layout.edges.filter((edge) => edge.from === resource.urn);
          return (
            <li key={resource.urn}>
              <a href={resourceHref(resource.urn)}>{resource.name}</a> ({statusText(resource)})
              {targets.length > 0 ? ' depends on ' : ''}
              {targets.map((edge, i) => (
                <span key={edge.to}>
                  {i > 0 ? ', ' : ''}
                  {names.get(edge.to)?.name ?? edge.to}
                </span>
              ))}
            </li>
          );
        })}
      </ul>
    </details>
  );
}
