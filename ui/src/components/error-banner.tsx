import type { ApiError } from '../api/client.js';

/**
 * The API's error JSON as the user reads it: the message first, the code and the
 * details (as text, never as HTML) under it. role="alert" so a screen reader says it.
 */
export function ErrorBanner({ error, title }: { error: ApiError | undefined; title?: string }) {
  if (!error) return null;
  const { code, message, details } = error.error;
  return (
    <div class="error-banner" role="alert">
      <p>
        <strong>{title ?? 'Steward refused the request'}:</strong> {message}
      </p>
      <p class="error-code">
        code <code>{code}</code>
      </p>
      {details === undefined ? null : (
        <pre class="error-details">{JSON.stringify(details, null, 2)}</pre>
      )}
    </div>
  );
}
