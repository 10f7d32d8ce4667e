import type { RequestHandler } from 'express';

import type { Registry } from '../../core/modules/registry.js';
import type { BodyValidator } from '../schemas.js';
import { buildOpenApiDocument } from './document.js';

/** GET /openapi.json: built on the first request (the modules are fixed once Steward runs), then served as is. */
export function openApiRoute(registry: Registry, schemas: BodyValidator): RequestHandler {
  let body: string | undefined;
  return (_req, res) => {
    body ??= JSON.stringify(buildOpenApiDocument(registry, schemas));
    res.type('application/json').send(body);
  };
}
