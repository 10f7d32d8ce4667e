import type { RequestHandler } from 'express';

import type { Registry } from '../../core/modules/registry.js';
import type { AccessControl } from '../auth/access-control.js';
import type { BodyValidator } from '../schemas.js';
import { buildOpenApiDocument, type OpenApiDocument } from './document.js';

/** The document, built on first use (the modules are fixed once Steward runs), then kept. */
export function openApiDocument(
  registry: Registry,
  schemas: BodyValidator,
  access: AccessControl['mode'],
): () => OpenApiDocument {
  let document: OpenApiDocument | undefined;
  return () => (document ??= buildOpenApiDocument(registry, schemas, { access }));
}

/** GET /openapi.json: the document as it was built, served as is. */
export function openApiRoute(document: () => object): RequestHandler {
  let body: string | undefined;
  return (_req, res) => {
    body ??= JSON.stringify(document());
    res.type('application/json').send(body);
  };
}
