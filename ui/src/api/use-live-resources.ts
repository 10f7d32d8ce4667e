import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

import { api, type ApiError, asApiError } from './client.js';
import { type StewardEvent, type StreamState, watchEvents } from './event-stream.js';
import type { Resource } from './resource-types.js';

/** GET /resources's query parameters, as the URL keeps them. */
export interface ResourceQuery {
  project?: string;
  kind?: string;
  status?: string;
  labels?: string;
  paused?: string;
  page_size?: string;
  page_token?: string;
}

export interface LiveResources {
  rows: Resource[] | undefined;
  /** The next page's token; null on the last page. */
  next: string | null;
  error: ApiError | undefined;
  stream: StreamState;
  /** Resources created since the list was read (the list is in URN order: they are not placed in it). */
  created: number;
  /** URNs of listed resources deleted since. */
  deleted: ReadonlySet<string>;
  reload(): void;
}

/** After an event, the resource is read again; a burst of events on one page is read in one go. */
const REFRESH_DELAY_MS = 100;

/**
 * One page of GET /resources, kept current by the events stream: a listed
 * resource's event reads it again (GET /resources/{urn}), a status change shows at
 * once from the event itself. Only the page is held, never the whole list.
 */
export function useLiveResources(query: ResourceQuery): LiveResources {
  const [rows, setRows] = useState<Resource[]>();
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<ApiError>();
  const [stream, setStream] = useState<StreamState>('connecting');
  const [created, setCreated] = useState(0);
  const [deleted, setDeleted] = useState<ReadonlySet<string>>(new Set());
  const listed = useRef(new Set<string>());
  /** Lists the current query again; set by the effect below for the stream and the "Show them" button. */
  const relist = useRef<() => void>(() => undefined);
  const key = JSON.stringify(query);

  // A layout effect: the request leaves right after the render, not after the next paint.
  useLayoutEffect(() => {
    const controller = new AbortController();
    let issued = 0;
    let applied = 0;
    // A list again (the stream opened afresh) does not cancel the one in flight: whichever
    // answers first shows, and an older answer never replaces a newer one.
    const list = async () => {
      const ticket = (issued += 1);
      try {
        const {
          data,
          error: failure,
          response,
        } = await api.GET('/api/v1beta1/resources', {
          params: { query: query as never },
          signal: controller.signal,
        });
        if (controller.signal.aborted || ticket < applied) return;
        applied = ticket;
        if (!data) {
          setError(asApiError(failure, response));
          return;
        }
        listed.current = new Set(data.resources.map((resource) => resource.urn));
        setRows(data.resources);
        setNext(data.next_page_token);
        setCreated(0);
        setDeleted(new Set());
        setError(undefined);
      } catch (err) {
        if (!controller.signal.aborted) setError(asApiError(err));
      }
    };
    relist.current = () => void list();
    void list();
    return () => controller.abort();
  }, [key]);

  useEffect(() => {
    const controller = new AbortController();
    const due = new Set<string>();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const refresh = async () => {
      timer = undefined;
      const urns = [...due];
      due.clear();
      for (const urn of urns) {
        const { data, response } = await api.GET('/api/v1beta1/resources/{urn}', {
          params: { path: { urn } },
          signal: controller.signal,
        });
        if (data) setRows((current) => current?.map((row) => (row.urn === urn ? data : row)));
        else if (response.status === 404) setDeleted((current) => new Set(current).add(urn));
      }
    };
    const onEvent = (event: StewardEvent) => {
      if (!event.type.startsWith('resource.')) return;
      if (!listed.current.has(event.urn)) {
        if (event.type === 'resource.created' && matches(event, query)) setCreated((n) => n + 1);
        return;
      }
      if (event.type === 'resource.deleted') {
        setDeleted((current) => new Set(current).add(event.urn));
        return;
      }
      if (event.type === 'resource.status_changed') {
        const change = event.data as { to?: string; action?: string; error?: string };
        setRows((current) => current?.map((row) => withStatus(row, event.urn, change)));
      }
      due.add(event.urn);
      timer ??= setTimeout(() => void refresh().catch(() => undefined), REFRESH_DELAY_MS);
    };
    void watchEvents({
      filter: streamFilter(query),
      onEvent,
      onState: setStream,
      // A fresh stream (not resumed) starts at the newest event: list again so nothing in between is lost.
      onOpen: (resumed) => {
        if (!resumed) relist.current();
      },
      signal: controller.signal,
    });
    return () => {
      controller.abort();
      if (timer) clearTimeout(timer);
    };
  }, [query.project, query.kind]);

  return {
    rows,
    next,
    error,
    stream,
    created,
    deleted,
    reload: () => relist.current(),
  };
}

/** The events stream filters what it can (project, kind); the rest is checked here. */
function streamFilter(query: ResourceQuery): Record<string, string> {
  const filter: Record<string, string> = {};
  if (query.project) filter.project = query.project;
  if (query.kind) filter.kind = query.kind;
  return filter;
}

function matches(event: StewardEvent, query: ResourceQuery): boolean {
  return (
    (!query.project || event.project === query.project) &&
    (!query.kind || event.kind === query.kind)
  );
}

/** The row with the event's status shown at once (the full read follows). */
function withStatus(
  row: Resource,
  urn: string,
  change: { to?: string; action?: string; error?: string },
): Resource {
  if (row.urn !== urn || !change.to) return row;
  return {
    ...row,
    state: {
      ...row.state,
      status: change.to as Resource['state']['status'],
      action: change.action ?? row.state.action,
      sync: { ...row.state.sync, last_error: change.error ?? row.state.sync.last_error },
    },
  };
}
