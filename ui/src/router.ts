import { useEffect, useState } from 'preact/hooks';

/**
 * A hash router (`#/resources/p/k/n?status=ERROR`): the server serves one
 * index.html and needs no fallback route, and a view's filters live in the URL so
 * it can be shared and survives a reload.
 */
export interface Route {
  /** `/resources/…`, always starting with a slash. */
  path: string;
  query: URLSearchParams;
}

export function currentRoute(): Route {
  const raw = location.hash.replace(/^#/, '') || '/';
  const at = raw.indexOf('?');
  const path = at < 0 ? raw : raw.slice(0, at);
  return {
    path: path.startsWith('/') ? path : `/${path}`,
    query: new URLSearchParams(at < 0 ? '' : raw.slice(at + 1)),
  };
}

/** The route, re-rendering the caller when the hash changes. */
export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const onChange = () => setRoute(currentRoute());
    addEventListener('hashchange', onChange);
    // The effect runs after the first paint, which a loaded machine delays: a hashchange before
    // it (a 401 moving the page to sign-in) was not heard, so read the address once now.
    onChange();
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

/** The href of a route: `href('/resources', {status: 'ERROR'})` is `#/resources?status=ERROR`. */
export function href(path: string, query?: Record<string, string> | URLSearchParams): string {
  const params = new URLSearchParams(query);
  const text = params.toString();
  return `#${path}${text ? `?${text}` : ''}`;
}

/** Goes to a route; `replace` rewrites the current history entry (a filter change, not a new page). */
export function navigate(
  path: string,
  query?: Record<string, string> | URLSearchParams,
  { replace = false } = {},
): void {
  const target = href(path, query);
  if (replace) {
    history.replaceState(null, '', target);
    dispatchEvent(new HashChangeEvent('hashchange'));
  } else {
    location.hash = target;
  }
}

/** The path's segments after a prefix, decoded: `/resources/a%2Fb` under `/resources` is ['a/b']. */
export function segmentsAfter(path: string, prefix: string): string[] | undefined {
  if (path !== prefix && !path.startsWith(`${prefix}/`)) return undefined;
  return path
    .slice(prefix.length)
    .split('/')
    .filter(Boolean)
    .map((part) => decodeURIComponent(part));
}
