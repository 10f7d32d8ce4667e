import { builtinModules } from '../modules/index.js';
import { buildOpenApiDocument, type OpenApiDocument } from './api/openapi/document.js';
import type { AccessMode } from './api/openapi/security.js';
import { loadBodySchemas } from './api/schemas.js';
import { loadConfig } from './config.js';
import { createRegistry } from './core/modules/registry.js';

/**
 * The OpenAPI document of a default deployment with tokens (or open): every built-in kind and every
 * answer access control adds. The CLI's client types (src/cli/api-types.ts) are generated
 * from it (`npm run gen:api-types`), and test/unit/api-types.test.ts fails when they drift.
 */
export async function referenceDocument(access: AccessMode = 'tokens'): Promise<OpenApiDocument> {
  const registry = createRegistry(await builtinModules(loadConfig({})));
  return buildOpenApiDocument(registry, loadBodySchemas(), { access });
}
