import { useEffect, useRef, useState } from 'preact/hooks';

import { api, type ApiError, asApiError } from './client.js';
import type { StewardEvent, StreamState } from './event-stream.js';
import { readOnEvents } from './read-on-events.js';
import type { Resource } from './resource-types.js';

export interface LiveResource {
  resource: Resource | undefined;
  error: ApiError | undefined;
  /** The resource was deleted while the page was open (or is not there: `error` says 404). */
  deleted: boolean;
  stream: StreamState;
  /** Counts the resource's events since the page opened: its revisions, operations and schedules read again on each. */
  changes: number;
  /** Reads the resource (and, through `changes`, the rest) again: after a change made from the page. */
  reload(): void;
}

/** A burst of events (an operation's started, status_changed, succeeded) is read once. */
const REFRESH_DELAY_MS = 100;

/**
 * GET /resources/{urn}, kept current by the events stream filtered to the URN: each
 * event of the resource reads it again, so a status change reaches the open page
 * without a reload. A fresh (not resumed) stream reads it again too, so nothing
 * between the read and the stream's start is missed.
 */
export function useLiveResource(urn: string): LiveResource {
  const [resource, setResource] = useState<Resource>();
  const [error, setError] = useState<ApiError>();
  const [deleted, setDeleted] = useState(false);
  const [stream, setStream] = useState<StreamState>('connecting');
  const [changes, setChanges] = useState(0);
  const readAgain = useRef<() => void>(() => undefined);

  useEffect(() => {
    setResource(undefined);
    setError(undefined);
    setDeleted(false);
    const controller = new AbortController();
    const { signal } = controller;
    const read = async () => {
      try {
        const {
          data,
          error: failure,
          response,
        } = await api.GET('/api/v1beta1/resources/{urn}', {
          params: { path: { urn } },
          signal,
        });
        if (signal.aborted) return;
        if (data) {
          setResource(data);
          setError(undefined);
        } else {
          if (response.status === 404) setDeleted(true);
          setError(asApiError(failure, response));
        }
        setChanges((n) => n + 1);
      } catch (err) {
        if (!signal.aborted) setError(asApiError(err));
      }
    };
    const relevant = (event: StewardEvent) => {
      if (event.urn !== urn) return false;
      if (event.type === 'resource.status_changed') {
        // Shown at once from the event itself; the full read follows.
        const change = event.data as { to?: Resource['state']['status']; action?: string };
        setResource((now) => (now && change.to ? withStatus(now, change.to, change.action) : now));
      }
      if (event.type === 'resource.deleted') setDeleted(true);
      return true;
    };
    readAgain.current = readOnEvents({
      filter: { urn },
      relevant,
      read,
      delayMs: REFRESH_DELAY_MS,
      onState: setStream,
      signal,
    });
    return () => controller.abort();
  }, [urn]);

  return {
    resource,
    error,
    deleted,
    stream,
    changes,
    reload: () => readAgain.current(),
  };
}

function withStatus(resource: Resource, status: Resource['state']['status'], action?: string) {
  return {
    ...resource,
    state: { ...resource.state, status, action: action ?? resource.state.action },
  };
}
