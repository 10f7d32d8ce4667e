import { useEffect, useState } from 'preact/hooks';

import { type ApiError, asApiError } from './client.js';

/** What a typed client call gives back (openapi-fetch's shape). */
interface Answer<T> {
  data?: T;
  error?: unknown;
  response?: Response;
}

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | undefined;
}

/**
 * One GET, read again whenever a key changes (the resource page bumps one on each
 * event of the resource): the last answer stays shown while the next is read.
 */
export function useLoaded<T>(
  load: (signal: AbortSignal) => Promise<Answer<T>>,
  keys: readonly unknown[],
): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({ data: undefined, error: undefined });
  useEffect(() => {
    const controller = new AbortController();
    load(controller.signal).then(
      ({ data, error, response }) => {
        if (controller.signal.aborted) return;
        if (data !== undefined) setState({ data, error: undefined });
        else setState((now) => ({ data: now.data, error: asApiError(error, response) }));
      },
      (err: unknown) => {
        if (!controller.signal.aborted)
          setState((now) => ({ data: now.data, error: asApiError(err) }));
      },
    );
    return () => controller.abort();
  }, keys);
  return state;
}
