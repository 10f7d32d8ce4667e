import { resourceHref } from '../format.js';
import { type GraphLayout, type PlacedEdge, type PlacedNode, statusText } from './layout.js';

/**
 * The laid-out graph as SVG built from Preact elements (never markup from a
 * string). Each node is a link to its resource's page, in the tab order, named by
 * the resource and its status; its colour follows the status and the status is
 * written on it too.
 */
export function GraphView({ layout, project }: { layout: GraphLayout; project: string }) {
  return (
    <div class="graph-wrap">
      <svg
        class="graph"
        viewBox={`0 0 ${Math.max(layout.width, 1)} ${Math.max(layout.height, 1)}`}
        width={layout.width}
        height={layout.height}
        role="group"
        aria-label={`Dependency graph of project ${project}`}
      >
        <defs>
          <marker
            id="arrow"
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="8"
            markerHeight="8"
            orient="auto-start-reverse"
          >
            <path d="M 0 0 L 10 5 L 0 10 z" class="graph-arrow" />
          </marker>
        </defs>
        <g aria-hidden="true">
          {layout.edges.map((edge) => (
            <Edge key={`${edge.from} ${edge.to}`} edge={edge} />
          ))}
        </g>
        {layout.nodes.map((node) => (
          <Node key={node.resource.urn} node={node} />
        ))}
      </svg>
    </div>
  );
}

/** From the dependent to what it depends on, the arrow at the dependency. */
function Edge({ edge }: { edge: PlacedEdge }) {
  const d = edge.points
    .map((point, i) => `${i === 0 ? 'M' : 'L'} ${point.x.toFixed(1)} ${point.y.toFixed(1)}`)
    .join(' ');
  return (
    <path d={d} class="graph-edge" marker-end="url(#arrow)" data-edge={`${edge.from} ${edge.to}`} />
  );
}

function Node({ node }: { node: PlacedNode }) {
  const { resource, x, y, width, height } = node;
  const status = statusText(resource);
  const left = x - width / 2;
  const top = y - height / 2;
  return (
    <a
      href={resourceHref(resource.urn)}
      class={`graph-node graph-node-${resource.state.status.toLowerCase()}`}
      data-urn={resource.urn}
    >
      <rect x={left} y={top} width={width} height={height} rx="6" />
      <text x={x} y={top + 19} class="graph-name">
        {resource.name}
      </text>
      <text x={x} y={top + 36} class="graph-status">
        {status}
      </text>
    </a>
  );
}
