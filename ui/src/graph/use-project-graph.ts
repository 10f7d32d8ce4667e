import { useEffect, useState } from 'preact/hooks';

import { type ApiError, asApiError } from '../api/client.js';
import { type StreamState, watchEvents } from '../api/event-stream.js';
import { listProjectResources } from '../api/project-resources.js';
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
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = async () => {
      timer = undefined;
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
    const readSoon = () => {
      timer ??= setTimeout(() => void read(), RELAYOUT_DELAY_MS);
    };
    void watchEvents({
      filter: { project },
      onEvent: (event) => {
        if (event.type.startsWith('resource.')) readSoon();
      },
      onState: setStream,
      // A fresh stream starts at the newest event: read again so nothing before it is missed.
      onOpen: (resumed) => {
        if (!resumed) readSoon();
      },
      signal,
    });
    void read();
    return () => {
      controller.abort();
      if (timer) clearTimeout(timer);
    };
  }, [project]);

  return { layout, truncated, error, stream };
}
