import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

import { pointer, resolve, type Schema } from './schema-values.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

/** One operation of the document, its references resolved: what the suites walk. */
export interface DocOperation {
  id: string;
  method: string;
  /** The path template: /api/v1beta1/resources/{urn} */
  path: string;
  parameters: Parameter[];
  body?: { schema: Schema; required: boolean };
  /** Status (or `default`) → the response object. */
  responses: Record<string, { content?: Record<string, { schema?: Schema }>; headers?: object }>;
  /** A 200 that never ends (an event stream): read up to its headers only. */
  streams: boolean;
}

/** Every operation of the document, in its order: what a new route brings is walked as it is documented. */
export function operationsOf(doc: any): DocOperation[] {
  return Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => {
      const op = item[method];
      const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: any) =>
        p.$ref ? pointer(doc, p.$ref) : p,
      );
      const responses = Object.fromEntries(
        Object.entries<any>(op.responses).map(([status, r]) => [
          status,
          r.$ref ? pointer(doc, r.$ref) : r,
        ]),
      );
      const json = op.requestBody?.content?.['application/json'];
      return {
        id: op.operationId as string,
        method,
        path,
        parameters: parameters.map((p: any) => ({
          name: p.name,
          in: p.in,
          required: p.required === true,
          schema: p.schema ?? true,
        })),
        ...(json
          ? { body: { schema: json.schema, required: op.requestBody.required === true } }
          : {}),
        responses,
        streams: Boolean(responses['200']?.content?.['text/event-stream']),
      } as DocOperation;
    }),
  );
}

export interface Answer {
  status: number;
  contentType: string;
  headers: Headers;
  /** Parsed JSON for a JSON answer; the text otherwise (undefined for a stream cut after its headers). */
  body: unknown;
}

/**
 * Whether an answer is one the document gives `op`: a documented status, a body of a
 * documented content type, and a JSON body that validates (ajv, JSON Schema 2020-12)
 * against the documented schema. Returns the problems (none: []).
 */
export function answerChecker(doc: object): (op: DocOperation, answer: Answer) => string[] {
  const validatorOf = schemaValidator(doc);
  return (op, answer) => {
    const response = op.responses[String(answer.status)] ?? op.responses.default;
    if (!response) return [`status ${answer.status} is not documented`];
    const media = Object.keys(response.content ?? {});
    if (media.length === 0)
      return answer.body === '' || answer.body === undefined
        ? []
        : ['a body where none is documented'];
    const type = media.find((m) => answer.contentType.startsWith(m));
    if (!type) return [`content type ${answer.contentType} is not one of ${media.join(', ')}`];
    const schema = response.content![type]!.schema;
    if (type !== 'application/json' || schema === undefined || answer.body === undefined) return [];
    const validate = validatorOf(schema);
    return validate(answer.body)
      ? []
      : (validate.errors ?? []).map(
          (e) => `${e.instancePath || '/'} ${e.message ?? ''} (${e.schemaPath})`,
        );
  };
}

/** A compiled validator (ajv, JSON Schema 2020-12, formats) of a schema of `doc`, its `#/` references into the document. */
export function schemaValidator(doc: object): (schema: Schema) => ValidateFunction {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: 'openapi.json' });
  const compiled = new Map<string, ValidateFunction>();
  return (schema) => {
    const text = JSON.stringify(schema).replaceAll('"$ref":"#/', '"$ref":"openapi.json#/');
    let validate = compiled.get(text);
    if (!validate) {
      const rooted = JSON.parse(text) as Schema;
      validate = ajv.compile(
        typeof rooted === 'object' ? { ...rooted, $id: `schema-${compiled.size}` } : rooted,
      );
      compiled.set(text, validate);
    }
    return validate;
  };
}

/** The schema of a parameter or body, its references followed once (for generators). */
export function schemaOf(doc: object, schema: Schema): Schema {
  return resolve(doc, schema);
}
