import { callerOf } from '../auth/caller.js';
import { queryOf } from '../request-parsing.js';
import { RouteTable } from '../route-table.js';

/**
 * GET /whoami: who the token is, so a client (the console) shows only what the
 * role allows. Open mode answers `{open: true}` alone: the anonymous caller may do
 * everything and has no name worth showing. `projects` is `["*"]` for every project.
 */
export function whoamiRoutes(): RouteTable {
  const routes = new RouteTable();
  routes.get('/whoami', (req, res) => {
    queryOf(req, []);
    const caller = callerOf(res);
    if (!caller.authenticated) {
      res.json({ open: true });
      return;
    }
    res.json({
      open: false,
      name: caller.name,
      role: caller.role,
      projects: caller.scope === '*' ? ['*'] : [...caller.scope],
    });
  });
  return routes;
}
