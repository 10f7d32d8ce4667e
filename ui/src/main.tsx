import { render } from 'preact';
import { useEffect } from 'preact/hooks';

import { ErrorBanner } from './components/error-banner.js';
import { lazyPage } from './components/lazy-page.js';
import { ActivityPage } from './pages/activity.js';
import { NotFoundPage } from './pages/not-found.js';
import type { PageProps } from './pages/page-props.js';
import { ResourceDetailPage } from './pages/resource-detail.js';
import { ResourceListPage } from './pages/resource-list.js';
import { SignInPage } from './pages/sign-in.js';
import { href, navigate, type Route, segmentsAfter, useRoute } from './router.js';
import { refreshSession, type Session, signOut, useSession } from './session.js';

// Their own chunks: the graph brings its layout library, the create form its schema forms.
const GraphPage = lazyPage(() => import('./pages/graph.js').then((m) => m.GraphPage));
const ResourceCreatePage = lazyPage(() =>
  import('./pages/resource-create.js').then((m) => m.ResourceCreatePage),
);

const NAV = [
  { path: '/resources', label: 'Resources' },
  { path: '/graph', label: 'Graph' },
  { path: '/activity', label: 'Activity' },
] as const;

function App() {
  const route = useRoute();
  const session = useSession();
  useEffect(() => {
    if (route.path === '/') navigate('/resources', undefined, { replace: true });
  }, [route.path]);
  return (
    <>
      <a class="skip-link" href="#main" onClick={skipToMain}>
        Skip to content
      </a>
      <header class="top-bar">
        <nav aria-label="Main">
          <a class="brand" href={href('/resources')}>
            Steward
          </a>
          <ul>
            {NAV.map((item) => (
              <li key={item.path}>
                <a
                  href={href(item.path)}
                  aria-current={route.path.startsWith(item.path) ? 'page' : undefined}
                >
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
          <SessionControl session={session} />
        </nav>
      </header>
      <main id="main" class="page" tabIndex={-1}>
        <Content route={route} session={session} />
      </main>
    </>
  );
}

/** The #main link would change the hash (the route): move focus instead. */
function skipToMain(event: MouseEvent) {
  event.preventDefault();
  document.getElementById('main')?.focus();
}

function SessionControl({ session }: { session: Session }) {
  if (session.state !== 'signed-in') return <a href={href('/sign-in')}>Sign in</a>;
  const { whoami } = session;
  if (whoami.open) return <span class="who">Steward is open</span>;
  return (
    <span class="who">
      <span>
        {whoami.name} ({whoami.role})
      </span>
      <button
        type="button"
        onClick={() => {
          signOut();
          navigate('/sign-in');
        }}
      >
        Sign out
      </button>
    </span>
  );
}

function Content({ route, session }: { route: Route; session: Session }) {
  if (session.state === 'loading') return <p class="loading">Loading…</p>;
  if (session.state === 'failed')
    return <ErrorBanner title="Steward could not be reached" error={session.error} />;
  if (route.path === '/sign-in' || session.state === 'signed-out')
    return <SignInPage session={session} />;
  const props: PageProps = { route, whoami: session.whoami };
  return <Page {...props} />;
}

function Page(props: PageProps) {
  const { path } = props.route;
  const urn = segmentsAfter(path, '/resources');
  if (urn?.length === 0) return <ResourceListPage {...props} />;
  if (urn?.length === 1) return <ResourceDetailPage {...props} />;
  if (path === '/graph') return <GraphPage {...props} />;
  if (path === '/activity') return <ActivityPage {...props} />;
  if (path === '/create') return <ResourceCreatePage {...props} />;
  return <NotFoundPage path={path} />;
}

// Asked before the first render, not in an effect after it: the first page waits on this answer.
void refreshSession();
render(<App />, document.getElementById('app')!);
