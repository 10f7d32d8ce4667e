import type { RegisteredModule, Registry } from '../../core/modules/registry.js';
import { queryOf } from '../request-parsing.js';
import { RouteTable } from '../route-table.js';

/** The published description of a kind: its actions and schemas. */
export function describeModule({ definition }: RegisteredModule) {
  return {
    kind: definition.kind,
    description: definition.description,
    actions: Object.fromEntries(
      Object.entries(definition.actions).map(([name, action]) => [
        name,
        { description: action.description ?? null, params_schema: action.paramsSchema ?? null },
      ]),
    ),
    config_schema: definition.configSchema,
    output_schema: definition.outputSchema ?? null,
    dependencies: definition.dependencies ?? {},
    resync_interval_ms: definition.resyncIntervalMs ?? null,
    has_logs: typeof definition.logs === 'function',
  };
}

export function moduleRoutes(registry: Registry): RouteTable {
  const routes = new RouteTable();
  routes.get('/modules', (req, res) => {
    queryOf(req, []);
    res.json({ modules: registry.all().map(describeModule) });
  });
  routes.get('/modules/:kind', (req, res) => {
    queryOf(req, []);
    res.json(describeModule(registry.describe(req.params.kind)));
  });
  return routes;
}
