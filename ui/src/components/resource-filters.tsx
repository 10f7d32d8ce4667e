import { useEffect, useState } from 'preact/hooks';

import { api } from '../api/client.js';

/** The filters the resources page keeps in its URL (GET /resources's, and drift). */
export const FILTER_KEYS = ['project', 'kind', 'status', 'labels', 'paused', 'drift'] as const;
export type Filters = Partial<Record<(typeof FILTER_KEYS)[number], string>>;

/**
 * The filter form. Applying it writes the filters to the URL (the page reads them
 * from there), so a filtered view can be shared and survives a reload.
 */
export function ResourceFilters({
  filters,
  onApply,
}: {
  filters: Filters;
  onApply(next: Filters): void;
}) {
  const [draft, setDraft] = useState<Filters>(filters);
  const kinds = useKinds();
  useEffect(() => setDraft(filters), [JSON.stringify(filters)]);
  const field = (name: keyof Filters) => ({
    id: `filter-${name}`,
    name,
    value: draft[name] ?? '',
    onInput: (event: Event) =>
      setDraft({ ...draft, [name]: (event.currentTarget as HTMLInputElement).value }),
  });
  return (
    <form
      class="filters"
      aria-label="Filters"
      onSubmit={(event) => {
        event.preventDefault();
        onApply(draft);
      }}
    >
      <div>
        <label for="filter-project">Project</label>
        <input {...field('project')} type="text" autocomplete="off" />
      </div>
      <div>
        <label for="filter-kind">Kind</label>
        <select {...field('kind')}>
          <option value="">any</option>
          {kinds.map((kind) => (
            <option key={kind} value={kind}>
              {kind}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for="filter-status">Status</label>
        <select {...field('status')}>
          <option value="">any</option>
          <option value="PENDING">PENDING</option>
          <option value="COMPLETED">COMPLETED</option>
          <option value="ERROR">ERROR</option>
        </select>
      </div>
      <div>
        <label for="filter-labels">Labels</label>
        <input
          {...field('labels')}
          type="text"
          placeholder="team=ops,tier=web"
          autocomplete="off"
        />
      </div>
      <div>
        <label for="filter-paused">Paused</label>
        <select {...field('paused')}>
          <option value="">any</option>
          <option value="true">paused</option>
          <option value="false">not paused</option>
        </select>
      </div>
      <div>
        <label for="filter-drift">Drift</label>
        <select {...field('drift')}>
          <option value="">any</option>
          <option value="true">drifted (on this page)</option>
        </select>
      </div>
      <div class="filter-actions">
        <button type="submit">Apply filters</button>
        <a href="#/resources">Clear</a>
      </div>
    </form>
  );
}

/** The loaded kinds (GET /modules), for the kind filter. */
function useKinds(): string[] {
  const [kinds, setKinds] = useState<string[]>([]);
  useEffect(() => {
    api.GET('/api/v1beta1/modules').then(
      ({ data }) => setKinds(data ? data.modules.map((module) => module.kind) : []),
      () => setKinds([]),
    );
  }, []);
  return kinds;
}
