/**
 * Compile-time checks, never run (nothing imports this file; `npm run typecheck` compiles it
 * with the rest of ui/src): each write below breaks the document in one way, and
 * `@ts-expect-error` fails the typecheck the day the console's writes stop being typed by it.
 */
import type { useWrite } from '../forms/use-write.js';
import { ifMatch, write } from './write.js';

const urn = 'orn:steward:file:demo:motd';

export function writesTheDocumentRefuses(send: ReturnType<typeof useWrite>['send']): void {
  // @ts-expect-error: no such path
  void write('post', '/api/v1beta1/resources/{urn}/restart', { params: { path: { urn } } });
  // @ts-expect-error: retry is a POST, not a PATCH
  void write('patch', '/api/v1beta1/resources/{urn}/retry', { params: { path: { urn } } });
  void write('patch', '/api/v1beta1/resources/{urn}', {
    params: { path: { urn } },
    // @ts-expect-error: a body field PATCH does not take
    body: { configs: {}, replicas: 2 },
  });
  void write('delete', '/api/v1beta1/resources/{urn}', {
    // @ts-expect-error: a query flag DELETE does not take
    params: { path: { urn }, query: { dry_run: 'true', force: 'true' } },
  });
  void write('post', '/api/v1beta1/resources/{urn}/pause', {
    // @ts-expect-error: pause takes no If-Match
    params: { path: { urn }, header: ifMatch(3) },
  });
  const schedule = { params: { path: { urn } }, body: {} };
  // @ts-expect-error: schedules take no dry run
  void send('post', '/api/v1beta1/resources/{urn}/schedules', schedule, true);
}
