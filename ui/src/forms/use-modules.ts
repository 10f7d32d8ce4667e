import { useEffect, useState } from 'preact/hooks';

import type { components, paths } from '../../../src/cli/api-types.js';
import { api, type ApiError, asApiError } from '../api/client.js';
import { fieldPointers, type JsonSchema } from './json-schema.js';

export type ModuleDocument = components['schemas']['Module'];
/**
 * The document lists the built-in kinds where a kind is a query parameter; a
 * user module's kind is any name the API takes, so the forms cast to this.
 */
export type Kind = NonNullable<
  NonNullable<paths['/api/v1beta1/resources']['get']['parameters']['query']>['kind']
>;

/** GET /modules: every loaded kind with its schemas (the forms are generated from them). */
export function useModules(): { modules?: ModuleDocument[]; error?: ApiError } {
  const [state, setState] = useState<{ modules?: ModuleDocument[]; error?: ApiError }>({});
  useEffect(() => {
    let live = true;
    void api.GET('/api/v1beta1/modules').then(
      ({ data, error, response }) => {
        if (live)
          setState(data ? { modules: data.modules } : { error: asApiError(error, response) });
      },
      (err: unknown) => live && setState({ error: asApiError(err) }),
    );
    return () => void (live = false);
  }, []);
  return state;
}

/** The API types a schema as an opaque object; the forms read it as JSON Schema. */
export function schemaOf(schema: unknown): JsonSchema {
  return (schema ?? { type: 'object', properties: {} }) as JsonSchema;
}

/** The pointers a create or PATCH form shows a field for: labels, each declared dependency, each config. */
export function specFieldPointers(module: ModuleDocument | undefined, configs: unknown): string[] {
  return [
    '/labels',
    '/spec/dependencies',
    ...Object.keys(module?.dependencies ?? {}).map((dep) => `/spec/dependencies/${dep}`),
    ...fieldPointers(schemaOf(module?.config_schema), '/spec/configs', configs),
  ];
}
