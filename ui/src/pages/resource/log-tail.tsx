import { useEffect, useState } from 'preact/hooks';

import type { ApiError } from '../../api/client.js';
import { followLogs, type LogChunk } from '../../api/log-stream.js';
import { ErrorBanner } from '../../components/error-banner.js';

/** Lines read before following, and the most kept on the page (older ones drop off the top). */
const TAIL = 200;
const KEPT = 1000;

/**
 * The live tail of the resource's logs (for a kind whose module has logs): the
 * last lines, then each new one as it is written. Steward has already replaced
 * every secret in them with `[secret]`; lines are text, never HTML.
 */
export function LogTail({ urn }: { urn: string }) {
  const [lines, setLines] = useState<LogChunk[]>([]);
  const [following, setFollowing] = useState(true);
  const [ended, setEnded] = useState<{ error?: ApiError }>();
  useEffect(() => {
    if (!following) return;
    setLines([]);
    setEnded(undefined);
    const controller = new AbortController();
    followLogs({
      urn,
      tail: TAIL,
      onLine: (chunk) => setLines((now) => [...now, chunk].slice(-KEPT)),
      signal: controller.signal,
    }).then(
      (error) => {
        if (controller.signal.aborted) return;
        setEnded({ error });
        setFollowing(false);
      },
      (err: unknown) => {
        if (controller.signal.aborted) return;
        setEnded({ error: { error: { code: 'unavailable', message: String(err) } } });
        setFollowing(false);
      },
    );
    return () => controller.abort();
  }, [urn, following]);
  return (
    <section aria-labelledby="logs-title" class="panel">
      <div class="page-head">
        <h2 id="logs-title">Logs</h2>
        <button type="button" onClick={() => setFollowing(!following)}>
          {following ? 'Stop following' : 'Follow the logs'}
        </button>
      </div>
      <p class="hint" role="status">
        {following ? 'Following: new lines appear as they are written.' : 'Not following.'}
      </p>
      <ErrorBanner error={ended?.error} title="The logs could not be read" />
      {lines.length === 0 ? (
        <p>No log lines yet.</p>
      ) : (
        <ol class="log" aria-label="Log lines" tabIndex={0}>
          {lines.map((chunk, i) => (
            <li key={i}>
              <time dateTime={chunk.ts}>{chunk.ts.slice(11, 23)}</time>
              {chunk.stream ? <span class="log-stream">{chunk.stream}</span> : null}
              <span class="log-line">{chunk.line}</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
