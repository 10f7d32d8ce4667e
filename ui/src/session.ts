import { useEffect, useState } from 'preact/hooks';

import type { paths } from '../../src/cli/api-types.js';
import { api, type ApiError, asApiError } from './api/client.js';
import { clearToken, readToken, saveToken } from './api/token-store.js';

/** GET /whoami's answer: open, or the token's name, role and projects. */
export type Whoami =
  paths['/api/v1beta1/whoami']['get']['responses']['200']['content']['application/json'];

export type Session =
  | { state: 'loading' }
  | { state: 'signed-in'; whoami: Whoami }
  | { state: 'signed-out'; error?: ApiError }
  | { state: 'failed'; error: ApiError };

let session: Session = { state: 'loading' };
const listeners = new Set<(next: Session) => void>();

function set(next: Session): Session {
  session = next;
  for (const listener of listeners) listener(next);
  return next;
}

/** Asks whoami with `token` (the stored one by default): signed in, open, or signed out on a 401. */
export async function refreshSession(token = readToken()): Promise<Session> {
  return set(await askWhoami(token));
}

async function askWhoami(token: string | undefined): Promise<Session> {
  try {
    const { data, error, response } = await api.GET('/api/v1beta1/whoami', {
      headers: token ? { Authorization: `Bearer ${token}` } : {},
    });
    if (data) return { state: 'signed-in', whoami: data };
    if (response.status === 401) return { state: 'signed-out', error: asApiError(error) };
    return { state: 'failed', error: asApiError(error, response) };
  } catch (err) {
    return { state: 'failed', error: asApiError(err) };
  }
}

/**
 * Checks a pasted token with whoami and keeps it only when Steward knows it. Stored before the
 * session says signed-in: the pages that draw then send their first requests with it.
 */
export async function signIn(token: string): Promise<Session> {
  const next = await askWhoami(token);
  if (next.state === 'signed-in') saveToken(token);
  return set(next);
}

export function signOut(): void {
  clearToken();
  set({ state: 'signed-out' });
}

/** The session, re-rendering the caller when it changes. */
export function useSession(): Session {
  const [current, setCurrent] = useState(session);
  useEffect(() => {
    listeners.add(setCurrent);
    setCurrent(session);
    return () => void listeners.delete(setCurrent);
  }, []);
  return current;
}

/** Whether the caller may change resources of `project` (any project when none is named). */
export function canChange(whoami: Whoami, project?: string): boolean {
  if (whoami.open) return true;
  if (whoami.role !== 'editor' && whoami.role !== 'admin') return false;
  const projects = whoami.projects ?? [];
  return project === undefined
    ? projects.length > 0
    : projects.includes('*') || projects.includes(project);
}

/** Whether the caller is an admin (of every project when `everywhere`). */
export function isAdmin(whoami: Whoami, everywhere = false): boolean {
  if (whoami.open) return true;
  return whoami.role === 'admin' && (!everywhere || (whoami.projects ?? []).includes('*'));
}
