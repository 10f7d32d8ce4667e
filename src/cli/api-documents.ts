import type { components } from './api-types.js';

/**
 * The documents the API sends, as its OpenAPI document describes them: the types are
 * generated (src/cli/api-types.ts, `npm run gen:api-types`), so a change of the document
 * that the CLI does not follow fails the typecheck.
 */
type Schemas = components['schemas'];

export type Resource = Schemas['Resource'];
export type Operation = Schemas['Operation'];
export type Revision = Schemas['Revision'];
export type Schedule = Schemas['Schedule'];
export type EventRecord = Schemas['Event'];
export type LogChunk = Schemas['LogChunk'];
export type SpecChange = Schemas['DryRun']['changes'][number];
export type Webhook = Schemas['Webhook'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type AuditEntry = Schemas['AuditEntry'];
