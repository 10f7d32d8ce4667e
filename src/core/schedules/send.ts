import type { RequestOptions, UpdateRequest } from '../requests/command-types.js';
import type { ScheduleRequest } from './schedule.js';

/** The commands a schedule's request goes to: on a URN (and committed), or on a resource read (and prepared). */
export interface RequestTarget<K, R> {
  update(key: K, request: UpdateRequest, options: RequestOptions): Promise<R>;
  execute(key: K, action: string, params: unknown, options: RequestOptions): Promise<R>;
  remove(key: K, options: RequestOptions): Promise<R>;
  retry(key: K, options: RequestOptions): Promise<R>;
}

/** Sends a schedule's request to the command it names. */
export function sendVia<K, R>(
  target: RequestTarget<K, R>,
  key: K,
  request: ScheduleRequest,
  options: RequestOptions,
): Promise<R> {
  const r = request as Record<string, unknown>;
  switch (request.action) {
    case 'update':
      return target.update(
        key,
        {
          configs: r.configs as Record<string, unknown> | undefined,
          labels: r.labels as Record<string, string> | undefined,
          dependencies: r.dependencies as Record<string, string> | undefined,
        },
        options,
      );
    case 'delete':
      return target.remove(key, options);
    case 'retry':
      return target.retry(key, options);
    default:
      return target.execute(key, request.action, r.params ?? {}, options);
  }
}
