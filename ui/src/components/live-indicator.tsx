import type { StreamState } from '../api/event-stream.js';

const TEXT: Record<StreamState, string> = {
  connecting: 'Connecting to live updates…',
  open: 'Live',
  retrying: 'Live updates interrupted: reconnecting…',
};

/** Whether the page is following the events stream; a screen reader hears the changes. */
export function LiveIndicator({ state }: { state: StreamState }) {
  return (
    <p class={`live live-${state}`} role="status">
      {TEXT[state]}
    </p>
  );
}
