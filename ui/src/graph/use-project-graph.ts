import { useEffect, useState } from 'preact/hooks';

import { type ApiError, asApiError } from '../api/client.js';
import type { StreamState } from '../api/event-stream.js';
import { listProjectResources } from '../api/project-resources.js';
import { readOnEvents } from '../api/read-on-events.js';
import { type GraphLayout, layoutGraph } from './layout.js';

export interface ProjectGraph {
  layout: GraphLayout | undefined;
  truncated: boolean;
  error: ApiError | undefined;
  stream: StreamState;
}

/** Events come in bursts (an operation's started, status_changed, succeeded): one read and layout per burst. */
const RELAYOUT_DELAY_MS = 300;

/**
 * A project's resources laid out as a graph, read again and laid out again when
 * an event of the project arrives (a status colour, a new or deleted resource).
 */
export function useProjectGraph(project: string): ProjectGraph {
  const [layout, setLayout] = useState<GraphLayout>();
  const [truncated, setTruncated] = useState(false);
  const [error, setError] = useState<ApiError>();
  const [stream, setStream] = useState<StreamState>('connecting');

  useEffect(() => {
    setLayout(undefined);
    setError(undefined);
    if (!project) return;
    const controller = new AbortController();
    const { signal } = controller;
    const read = async () => {
      try {
        const { data, error: failure } = await listProjectResources(project, signal);
        if (signal.aborted) return;
        if (!data) {
          setError(failure);
          return;
        }
        const next = await layoutGraph(data.resources);
        if (signal.aborted) return;
        setLayout(next);
        setTruncated(data.truncated);
        setError(undefined);
      } catch (err) {
        if (!signal.aborted) setError(asApiError(err));
      }
    };
    readOnEvents({
      filter: { project },
      relevant: (event) => event.type.startsWith('resource.'),
      read,
      delayMs: RELAYOUT_DELAY_MS,
      onState: setStream,
      signal,
    });
    return () => controller.abort();
  }, [project]);

  return { layout, truncated, error, stream };
}
