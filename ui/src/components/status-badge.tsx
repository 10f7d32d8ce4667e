/** A resource's status as a badge: stable ones (COMPLETED, ERROR) solid, a transitional one (PENDING) outlined with its action. */
export function StatusBadge({
  status,
  action,
  paused = false,
}: {
  status: string;
  action?: string;
  paused?: boolean;
}) {
  const transitional = status === 'PENDING';
  const label = transitional && action ? `${status} (${action})` : status;
  return (
    <span class="status-line">
      <span
        class={`badge badge-${status.toLowerCase()}${transitional ? ' badge-transitional' : ''}`}
      >
        {label}
      </span>
      {paused ? <span class="badge badge-paused">paused</span> : null}
    </span>
  );
}
