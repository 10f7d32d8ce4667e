import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { ErrorBanner } from './error-banner.js';

/**
 * A page loaded on first use, as its own chunk (esbuild splits at a dynamic
 * import): the graph page's layout library is not part of the first load.
 */
export function lazyPage<P extends object>(
  load: () => Promise<ComponentType<P>>,
): ComponentType<P> {
  let loaded: ComponentType<P> | undefined;
  return function LazyPage(props: P) {
    const [Page, setPage] = useState<ComponentType<P> | undefined>(() => loaded);
    const [failure, setFailure] = useState<string>();
    useEffect(() => {
      if (Page) return;
      load().then(
        (component) => {
          loaded = component;
          setPage(() => component);
        },
        (err: unknown) => setFailure(String(err)),
      );
    }, [Page]);
    if (failure)
      return (
        <ErrorBanner
          title="The page could not be loaded"
          error={{ error: { code: 'unavailable', message: failure } }}
        />
      );
    return Page ? <Page {...props} /> : <p class="loading">Loading…</p>;
  };
}
