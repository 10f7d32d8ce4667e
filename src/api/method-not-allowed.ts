import type { RequestHandler } from 'express';

import { sendError } from './http-errors.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface DocumentedPath {
  pattern: RegExp;
  allow: string;
  /** `allow`'s methods, looked up on every request. */
  methods: ReadonlySet<string>;
}

/**
 * 405 with `Allow` for a path the OpenAPI document has, asked with a method it does not
 * list (RFC 9110 §15.5.6), instead of the 404 of a path that does not exist. The table
 * is read from the document, so a route is covered as soon as it is documented (and
 * test/integration/openapi.test.ts keeps the document and the routes equal). HEAD is
 * allowed wherever GET is, as express serves it. `paths` is read on the first request.
 */
export function methodNotAllowed(paths: () => Record<string, object>): RequestHandler {
  let table: DocumentedPath[] | undefined;
  return (req, res, next) => {
    table ??= documentedPaths(paths());
    const found = table.find(({ pattern }) => pattern.test(req.path));
    if (!found || found.methods.has(req.method.toUpperCase())) {
      next();
      return;
    }
    res.setHeader('Allow', found.allow);
    sendError(res, 'method_not_allowed', `${req.method} is not allowed on ${req.path}`, {
      allow: found.allow.split(', '),
    });
  };
}

function documentedPaths(paths: Record<string, object>): DocumentedPath[] {
  return Object.entries(paths).map(([path, item]) => {
    const methods = METHODS.filter((m) => m in item);
    if (methods.includes('get') && !methods.includes('head')) methods.push('head');
    const upper = methods.map((m) => m.toUpperCase());
    return { pattern: templatePattern(path), allow: upper.join(', '), methods: new Set(upper) };
  });
}

/** `/resources/{urn}/logs` → a path of those segments, any value in a `{}` one; case and a trailing slash as express's routing ignores them. */
function templatePattern(template: string): RegExp {
  const source = template
    .split(/(\{[^}]+\})/)
    .map((part) =>
      /^\{[^}]+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${source}/?$`, 'i');
}
