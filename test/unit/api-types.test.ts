import { readFileSync } from 'node:fs';

import { referenceDocument } from '../../src/reference-document.js';

/**
 * The CLI's client types are generated from the OpenAPI document (openapi-typescript); the
 * committed file must be what a fresh generation writes, so a change of the document that is
 * not regenerated (and, through the types, followed by the CLI) fails here.
 */
describe('src/cli/api-types.ts', () => {
  it('is what openapi-typescript generates from the document (npm run gen:api-types)', async () => {
    const { apiTypes, API_TYPES_FILE } = await import('../../scripts/gen-api-types.mjs');
    const fresh = await apiTypes(await referenceDocument());
    const committed = readFileSync(API_TYPES_FILE, 'utf8');
    // On a difference, jest prints the first changed lines; the fix is `npm run gen:api-types`.
    expect(committed).toEqual(fresh);
  });
});
