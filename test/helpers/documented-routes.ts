const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * Each `METHOD /path` the OpenAPI document has, as express routes them: an action's own
 * path (`/actions/retag`, whose body is that action's typed params) is the one
 * `/actions/{action}` route.
 */
export function documentedRoutes(
  doc: { paths: Record<string, Record<string, unknown>> },
  methods: readonly string[] = METHODS,
): string[] {
  const routes = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((key) => methods.includes(key))
      .map(
        (method) =>
          `${method.toUpperCase()} ${path.replace(/\/actions\/[a-z][a-z0-9_]*$/, '/actions/{action}')}`,
      ),
  );
  return [...new Set(routes)];
}
