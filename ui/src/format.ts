/** "3 min ago" for recent times, the local date and time for older ones. */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const ms = now - Date.parse(iso);
  if (!Number.isFinite(ms)) return iso;
  const s = Math.round(ms / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(iso).toLocaleString();
}

/** The local date and time, for a title or a `<time>`'s text. */
export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

/** The route of a resource's page. */
export function resourceHref(urn: string): string {
  return `#/resources/${encodeURIComponent(urn)}`;
}
