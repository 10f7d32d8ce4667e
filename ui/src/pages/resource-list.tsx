import { isDrifted } from '../api/resource-types.js';
import { type ResourceQuery, useLiveResources } from '../api/use-live-resources.js';
import { ErrorBanner } from '../components/error-banner.js';
import { LiveIndicator } from '../components/live-indicator.js';
import { FILTER_KEYS, type Filters, ResourceFilters } from '../components/resource-filters.js';
import { ResourceTable } from '../components/resource-table.js';
import { href, navigate } from '../router.js';
import { canChange } from '../session.js';
import type { PageProps } from './page-props.js';

const PAGE_SIZES = ['10', '20', '50', '100', '200'];
const DEFAULT_PAGE_SIZE = '50';

/**
 * The resources: one page at a time (cursor paging: GET /resources never loads
 * them all), filtered by the URL's query, live from the events stream.
 */
export function ResourceListPage({ route, whoami }: PageProps) {
  const filters = Object.fromEntries(
    FILTER_KEYS.flatMap((key) => {
      const value = route.query.get(key);
      return value ? [[key, value]] : [];
    }),
  ) as Filters;
  const pageSize = route.query.get('page_size') ?? DEFAULT_PAGE_SIZE;
  const pageToken = route.query.get('page_token') ?? undefined;
  const { drift, ...apiFilters } = filters;
  const query: ResourceQuery = { ...apiFilters, page_size: pageSize, page_token: pageToken };
  const live = useLiveResources(query);
  const rows = live.rows && drift ? live.rows.filter(isDrifted) : live.rows;
  const urlOf = (changes: Record<string, string | undefined>) => {
    const next = new URLSearchParams(route.query);
    for (const [key, value] of Object.entries(changes)) {
      if (value) next.set(key, value);
      else next.delete(key);
    }
    return next;
  };

  return (
    <section aria-labelledby="resources-title">
      <div class="page-head">
        <h1 id="resources-title">Resources</h1>
        {canChange(whoami, filters.project) ? (
          <a
            class="button-link"
            href={href('/create', filters.project ? { project: filters.project } : {})}
          >
            Create
          </a>
        ) : null}
      </div>
      <ResourceFilters
        filters={filters}
        onApply={(next) => navigate('/resources', urlOf({ ...next, page_token: undefined }))}
      />
      <LiveIndicator state={live.stream} />
      {live.created > 0 ? (
        <p class="notice" role="status">
          {live.created} new {live.created === 1 ? 'resource' : 'resources'} since this page was
          read.{' '}
          <button type="button" onClick={live.reload}>
            Show them
          </button>
        </p>
      ) : null}
      <ErrorBanner error={live.error} title="The resources could not be listed" />
      {rows === undefined ? (
        <p class="loading">Loading…</p>
      ) : rows.length === 0 ? (
        <p>No resources match these filters.</p>
      ) : (
        <ResourceTable rows={rows} deleted={live.deleted} />
      )}
      <nav class="pager" aria-label="Pages">
        {pageToken ? (
          <a href={href('/resources', urlOf({ page_token: undefined }))}>First page</a>
        ) : null}
        {live.next ? (
          <a href={href('/resources', urlOf({ page_token: live.next }))}>Next page</a>
        ) : null}
        <label for="page-size">Per page</label>
        <select
          id="page-size"
          value={pageSize}
          onChange={(event) =>
            navigate(
              '/resources',
              urlOf({ page_size: event.currentTarget.value, page_token: undefined }),
            )
          }
        >
          {PAGE_SIZES.map((size) => (
            <option key={size} value={size}>
              {size}
            </option>
          ))}
        </select>
      </nav>
    </section>
  );
}
