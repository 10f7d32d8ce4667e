import { useState } from 'preact/hooks';

import type { paths } from '../../../src/cli/api-types.js';
import type { ApiError } from '../api/client.js';
import {
  write,
  type WriteAnswer,
  type WriteInit,
  type WriteMethod,
  type WritePath,
} from '../api/write.js';
import type { DryRunAnswer } from '../components/dry-run-preview.js';
import { focusFirstInvalid } from './focus-invalid.js';

/** The query parameters of `M P` in the document (never when it takes none). */
type QueryOf<M extends WriteMethod, P extends WritePath<M>> = NonNullable<
  paths[P][M] extends { parameters: { query?: infer Q } } ? Q : never
>;

/** A dry run is asked only of a write whose query takes `dry_run` (docs/api.md "Dry runs"). */
type DryRunFlag<M extends WriteMethod, P extends WritePath<M>> = [QueryOf<M, P>] extends [never]
  ? false
  : 'dry_run' extends keyof QueryOf<M, P>
    ? boolean
    : false;

/** `init` with `?dry_run=true` added to its query. */
function withDryRun<I extends { params?: object }>(init: I): I {
  const params = (init.params ?? {}) as { query?: object };
  return { ...init, params: { ...params, query: { ...params.query, dry_run: 'true' } } };
}

/**
 * The state of one form's writes: busy while one is in flight, the last refusal
 * (and its status, for a 412), and the last dry run's answer. `send` answers
 * `{data}` when the write was accepted, undefined when it was refused.
 */
export function useWrite() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ error: ApiError; status: number }>();
  const [preview, setPreview] = useState<DryRunAnswer>();
  const send = async <M extends WriteMethod, P extends WritePath<M>>(
    method: M,
    path: P,
    init: WriteInit<M, P>,
    dryRun?: DryRunFlag<M, P>,
  ): Promise<{ data: WriteAnswer<M, P> | undefined } | undefined> => {
    setBusy(true);
    const answer = await write(method, path, dryRun ? withDryRun(init) : init);
    setBusy(false);
    if (!answer.ok) {
      setError({ error: answer.error, status: answer.status });
      setPreview(undefined);
      focusFirstInvalid();
      return undefined;
    }
    setError(undefined);
    if (dryRun) setPreview(answer.data as DryRunAnswer | undefined);
    return { data: answer.data };
  };
  return {
    busy,
    error: error?.error,
    status: error?.status,
    preview,
    send,
    clear: () => {
      setError(undefined);
      setPreview(undefined);
    },
  };
}
