import { useState } from 'preact/hooks';

import { ErrorBanner } from '../components/error-banner.js';
import { currentRoute, navigate } from '../router.js';
import { type Session, signIn } from '../session.js';

/**
 * Paste a token (from `steward token create`). It is checked with whoami and kept
 * in this tab's sessionStorage only. An open Steward needs none, and says so.
 */
export function SignInPage({ session }: { session: Session }) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<Session>();
  const whoami = session.state === 'signed-in' ? session.whoami : undefined;
  const onSubmit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const answer = await signIn(token.trim());
    setBusy(false);
    setResult(answer);
    if (answer.state === 'signed-in') {
      setToken('');
      goBack();
    }
  };
  return (
    <section aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in</h1>
      {whoami?.open ? (
        <p class="notice">
          Steward is open: it runs without tokens, and every visitor may do everything. No sign-in
          is needed. <a href="#/resources">Go to the resources</a>.
        </p>
      ) : null}
      {whoami && !whoami.open ? (
        <p class="notice">
          Signed in as <strong>{whoami.name}</strong> ({whoami.role}). Paste another token to
          switch.
        </p>
      ) : null}
      {!whoami?.open ? (
        <form class="sign-in" onSubmit={(event) => void onSubmit(event)}>
          <label for="token">Token</label>
          <input
            id="token"
            name="token"
            type="password"
            autocomplete="off"
            spellcheck={false}
            required
            value={token}
            onInput={(event) => setToken(event.currentTarget.value)}
          />
          <p class="hint">
            A token from <code>steward token create</code>. It stays in this tab only and is sent as
            the Authorization header.
          </p>
          <button type="submit" disabled={busy || token.trim() === ''}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
      ) : null}
      {result && result.state !== 'signed-in' && result.state !== 'loading' ? (
        <ErrorBanner title="Sign-in failed" error={result.error} />
      ) : null}
    </section>
  );
}

/**
 * Back to the page that asked for sign-in; only a route of this console (never another origin).
 * Read from the address at the moment of sign-in, not from a rendered prop: a 401 moves the page to
 * `#/sign-in?next=…` at once, but the page hears of it in a hashchange event, and a click can come
 * first (twice in CI under load: signed in on one page, landed on the resource list). Shown in place
 * of a page (signed out on `#/activity`), sign-in stays on that page.
 */
function goBack(): void {
  const { path, query } = currentRoute();
  const next = path === '/sign-in' ? query.get('next') : `${path}${query.size ? `?${query}` : ''}`;
  const target = next && next.startsWith('/') && !next.startsWith('/sign-in') ? next : '/resources';
  const at = target.indexOf('?');
  navigate(
    at < 0 ? target : target.slice(0, at),
    new URLSearchParams(at < 0 ? '' : target.slice(at + 1)),
  );
}
