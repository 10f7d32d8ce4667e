/**
 * The signed-in token, in sessionStorage only: it is gone when the tab closes and
 * never sent anywhere but the Authorization header (never in a URL or a cookie).
 */
const KEY = 'steward.token';

export function readToken(): string | undefined {
  try {
    return sessionStorage.getItem(KEY) ?? undefined;
  } catch {
    // Storage refused (a privacy mode): the console then works open only.
    return undefined;
  }
}

export function saveToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function clearToken(): void {
  sessionStorage.removeItem(KEY);
}
