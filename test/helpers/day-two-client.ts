import { call, type JsonResponse, waitFor } from './harness.js';
import { openEvents, type SseEvent, type SseStream } from './sse.js';

/**
 * The day-2 requests of issue 13 (create, import, PATCH, refresh, delete with its options) as a
 * user sends them to a running Steward, over real HTTP, for the end-to-end suites of the built-in
 * kinds. Only `settled` and `eventsUntil` wait.
 */
export function dayTwoClient(
  api: string,
  options: {
    /** Called while waiting, for a Steward whose worker the test steps (`engine.drain()`). */
    step?: () => Promise<unknown>;
  } = {},
) {
  const resource = (urn: string) => `${api}/resources/${urn}`;
  const client = {
    create: (body: Record<string, unknown>) => call('POST', `${api}/resources`, body),
    get: async (urn: string) => (await call('GET', resource(urn))).body,
    patch: (urn: string, body: Record<string, unknown>) => call('PATCH', resource(urn), body),
    refresh: (urn: string) => call('POST', `${resource(urn)}/refresh`),
    remove: (urn: string, query = '') =>
      call('DELETE', `${resource(urn)}${query ? `?${query}` : ''}`),

    /** Waits until the operation `accepted` carried is final, then answers the resource as it is then. */
    async settled(accepted: JsonResponse): Promise<any> {
      expect(accepted.status).toBe(202);
      const { id } = accepted.body.operation as { id: string };
      await waitFor(
        async () => {
          await options.step?.();
          const op = await call('GET', `${api}/operations/${id}`);
          return ['succeeded', 'failed', 'cancelled'].includes(op.body.status);
        },
        `operation ${id} (${accepted.body.operation.action}) to finish`,
        30_000,
      );
      const now = await call('GET', resource(accepted.body.resource.urn));
      return now.status === 404 ? null : now.body;
    },

    /** The resource's events from the start of GET /events, up to the first of `type`. */
    async eventsUntil(urn: string, type: string): Promise<SseEvent[]> {
      const stream = (await openEvents(`${api}/events?since=0&urn=${urn}`)) as SseStream;
      expect(stream.status).toBe(200);
      const seen: SseEvent[] = [];
      try {
        for (;;) {
          const event = await stream.next(10_000);
          seen.push(event);
          if (event.event === type) return seen;
        }
      } finally {
        stream.close();
      }
    },
  };
  return client;
}

export type DayTwoClient = ReturnType<typeof dayTwoClient>;
