import { dependencyUrns } from '../api/project-resources.js';
import type { Resource } from '../api/resource-types.js';

export interface PlacedNode {
  resource: Resource;
  /** Centre and size, in SVG units. */
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface PlacedEdge {
  /** The dependent, and the resource it depends on. */
  from: string;
  to: string;
  points: Array<{ x: number; y: number }>;
}

export interface GraphLayout {
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  width: number;
  height: number;
}

const NODE_HEIGHT = 46;
/** An estimate of a character's width at the label's size: dagre needs sizes before anything is drawn. */
const CHAR_WIDTH = 7.6;

/**
 * Lays out a project's resources with dagre, loaded here by a dynamic import so
 * the layout library is its own chunk, fetched when a graph is first drawn and
 * never in the console's first load. A dependency is drawn above what depends on
 * it; an edge to a resource outside the list (not read) is left out.
 */
export async function layoutGraph(resources: readonly Resource[]): Promise<GraphLayout> {
  const { default: dagre } = await import('@dagrejs/dagre');
  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: 'BT', nodesep: 28, ranksep: 56, marginx: 12, marginy: 12 });
  graph.setDefaultEdgeLabel(() => ({}));
  const byUrn = new Map(resources.map((resource) => [resource.urn, resource]));
  for (const resource of resources) {
    const text = Math.max(resource.name.length, statusText(resource).length);
    graph.setNode(resource.urn, { width: Math.ceil(text * CHAR_WIDTH) + 28, height: NODE_HEIGHT });
  }
  for (const resource of resources)
    for (const target of dependencyUrns(resource))
      if (byUrn.has(target)) graph.setEdge(resource.urn, target);
  dagre.layout(graph);
  const nodes = resources.map((resource) => {
    const { x, y, width, height } = graph.node(resource.urn);
    return { resource, x, y, width, height };
  });
  const edges = graph.edges().map((edge) => ({
    from: edge.v,
    to: edge.w,
    points: graph.edge(edge).points ?? [],
  }));
  const { width = 0, height = 0 } = graph.graph();
  return { nodes, edges, width, height };
}

/** The status as the node's second line says it: the words, so colour is never the only sign. */
export function statusText(resource: Resource): string {
  const { status, action, paused } = resource.state;
  const base = status === 'PENDING' ? `${status} (${action})` : status;
  return paused ? `${base}, paused` : base;
}
