import { useEffect, useState } from 'preact/hooks';

import { api, type ApiError, asApiError } from './client.js';
import { type StewardEvent, type StreamState, watchEvents } from './event-stream.js';
import type { Operation } from './resource-types.js';

export interface LiveActivity {
  /** The newest operations (GET /operations), each kept current by its events. */
  operations: Operation[] | undefined;
  /** Events seen since the page opened, newest first. */
  events: StewardEvent[];
  error: ApiError | undefined;
  stream: StreamState;
}

const OPERATIONS_SHOWN = 50;
const EVENTS_KEPT = 200;

/**
 * The activity of the projects the caller may see: the newest operations, and
 * every event from the stream as it comes (the API scopes both to the token).
 */
export function useLiveActivity(): LiveActivity {
  const [operations, setOperations] = useState<Operation[]>();
  const [events, setEvents] = useState<StewardEvent[]>([]);
  const [error, setError] = useState<ApiError>();
  const [stream, setStream] = useState<StreamState>('connecting');

  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    const list = async () => {
      try {
        const {
          data,
          error: failure,
          response,
        } = await api.GET('/api/v1beta1/operations', {
          params: { query: { page_size: OPERATIONS_SHOWN } },
          signal,
        });
        if (data) {
          setOperations(data.operations);
          setError(undefined);
        } else if (!signal.aborted) setError(asApiError(failure, response));
      } catch (err) {
        if (!signal.aborted) setError(asApiError(err));
      }
    };
    const readOperation = async (id: string) => {
      const { data } = await api.GET('/api/v1beta1/operations/{id}', {
        params: { path: { id } },
        signal,
      });
      if (data) setOperations((current) => upsert(current ?? [], data));
    };
    void watchEvents({
      onEvent(event) {
        setEvents((current) => [event, ...current].slice(0, EVENTS_KEPT));
        if (event.type.startsWith('operation.') && event.operation_id)
          void readOperation(event.operation_id).catch(() => undefined);
      },
      onState: setStream,
      onOpen(resumed) {
        if (!resumed) void list();
      },
      signal,
    });
    return () => controller.abort();
  }, []);

  return { operations, events, error, stream };
}

/** The operation in its place (ids sort by creation time), newest first, at most OPERATIONS_SHOWN. */
function upsert(operations: Operation[], operation: Operation): Operation[] {
  const rest = operations.filter((item) => item.id !== operation.id);
  return [...rest, operation]
    .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .slice(0, OPERATIONS_SHOWN);
}
