import type { Route } from '../router.js';
import type { Whoami } from '../session.js';

/** What main.tsx hands every page: the route (path and query) and who is signed in. */
export interface PageProps {
  route: Route;
  whoami: Whoami;
}
