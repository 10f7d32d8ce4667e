import type { ApiError } from '../api/client.js';
import { ErrorBanner } from './error-banner.js';

/**
 * A refused write as the user reads it: a 412 (the resource changed since this
 * page read it) says so and offers a reload; any other error is the banner.
 */
export function WriteFeedback(props: {
  error: ApiError | undefined;
  status: number | undefined;
  onReload(): void;
}) {
  if (props.status === 412)
    return (
      <div class="error-banner" role="alert">
        <p>
          <strong>Someone else changed this resource; reload</strong> to see the current version
          before you try again.
        </p>
        <button type="button" onClick={props.onReload}>
          Reload
        </button>
      </div>
    );
  return <ErrorBanner error={props.error} />;
}
