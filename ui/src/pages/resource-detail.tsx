import { useEffect, useState } from 'preact/hooks';

import { api, type ApiError, asApiError } from '../api/client.js';
import type { Resource } from '../api/resource-types.js';
import { ErrorBanner } from '../components/error-banner.js';
import { ResourceActions } from '../components/resource-actions.js';
import { segmentsAfter } from '../router.js';
import type { PageProps } from './page-props.js';

/**
 * A stand-in of the resource page (branch ui-detail writes the real one): the
 * resource's name and status, and the actions of resource-actions.tsx, read
 * again after each change.
 */
export function ResourceDetailPage({ route, whoami }: PageProps) {
  const urn = segmentsAfter(route.path, '/resources')?.[0] ?? '';
  const [resource, setResource] = useState<Resource>();
  const [error, setError] = useState<ApiError>();
  const [reads, setReads] = useState(0);
  useEffect(() => {
    let live = true;
    void api
      .GET('/api/v1beta1/resources/{urn}', { params: { path: { urn } } })
      .then(({ data, error: failure, response }) => {
        if (!live) return;
        setResource(data);
        setError(data ? undefined : asApiError(failure, response));
      });
    return () => void (live = false);
  }, [urn, reads]);
  if (error) return <ErrorBanner title="The resource could not be read" error={error} />;
  if (!resource) return <p class="loading">Loading…</p>;
  return (
    <section aria-labelledby="resource-title">
      <h1 id="resource-title">{resource.name}</h1>
      <p>
        {resource.urn}: <span class="status-text">{resource.state.status}</span>, version{' '}
        {resource.version}
      </p>
      <ResourceActions
        resource={resource}
        whoami={whoami}
        onChanged={() => setReads((n) => n + 1)}
      />
    </section>
  );
}
