import { useState } from 'preact/hooks';

import type { ApiError } from '../api/client.js';
import { write, type WriteOptions } from '../api/write.js';
import type { DryRunAnswer } from '../components/dry-run-preview.js';
import { focusFirstInvalid } from './focus-invalid.js';

/**
 * The state of one form's writes: busy while one is in flight, the last refusal
 * (and its status, for a 412), and the last dry run's answer. `send` answers
 * whether the real write was accepted.
 */
export function useWrite() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ error: ApiError; status: number }>();
  const [preview, setPreview] = useState<DryRunAnswer>();
  const send = async (
    method: 'POST' | 'PATCH' | 'DELETE',
    path: string,
    options: WriteOptions,
    dryRun = false,
  ): Promise<unknown> => {
    setBusy(true);
    const query = { ...options.query, ...(dryRun ? { dry_run: 'true' } : {}) };
    const answer = await write<DryRunAnswer>(method, path, { ...options, query });
    setBusy(false);
    if (!answer.ok) {
      setError({ error: answer.error, status: answer.status });
      setPreview(undefined);
      focusFirstInvalid();
      return undefined;
    }
    setError(undefined);
    if (dryRun) setPreview(answer.data);
    return answer.data ?? {};
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
