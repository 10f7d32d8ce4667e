import { fileURLToPath } from 'node:url';

import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

import type { ServedRoutes } from '../../src/api/route-table.js';
import { defineModule } from '../../src/sdk/index.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { documentedRoutes } from '../helpers/documented-routes.js';
import { call, type Harness, startSteward, waitForStatus } from '../helpers/harness.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * An in-process module whose schemas use local `#/definitions` references and
 * which declares a dependency, so the document must re-root both.
 */
const gadget = defineModule({
  kind: 'gadget',
  description: 'A module only this test has.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['size'],
    definitions: { size: { type: 'integer', minimum: 1 } },
    properties: {
      size: { $ref: '#/definitions/size' },
      secret: { type: 'string', writeOnly: true },
    },
  },
  outputSchema: { type: 'object', properties: { served: { type: 'boolean' } } },
  dependencies: { home: { kind: 'ledger', optional: true } },
  actions: {
    create: {},
    update: {},
    delete: {},
    resize: {
      description: 'New size.',
      paramsSchema: {
        type: 'object',
        required: ['size'],
        properties: { size: { type: 'integer', minimum: 1 } },
      },
    },
  },
  plan: () => ({}),
  sync: () => Promise.resolve({ status: 'COMPLETED' as const, output: { served: true } }),
});

interface Layer {
  rawPath?: string | string[];
  route?: { path: string; methods: Record<string, boolean> };
  handle: Handler;
}

/** A layer's middleware: a Router (`stack`), a chain (`handlers`, chain.ts), a handler under a path (`mount`, mount.ts) or the API's table (`routes`). */
interface Handler {
  stack?: Layer[];
  handlers?: Handler[];
  mount?: { path: string; handler: Handler };
  routes?: ServedRoutes['routes'];
}

/**
 * Every `METHOD /path` express serves, walking the router stack, the routers mounted in it, and the
 * chains and the API's route table (route-table.ts) in those.
 */
function servedRoutes(stack: Layer[], prefix = ''): string[] {
  return stack.flatMap((layer) => {
    if (layer.route) {
      const { path, methods } = layer.route;
      return Object.keys(methods)
        .filter((method) => method !== '_all')
        .map((method) => documentStyle(method, `${prefix}${path}`));
    }
    const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
    return servedBy(layer.handle, `${prefix}${mount}`);
  });
}

/** `get`, `/resources/:urn` → `GET /resources/{urn}`, as documentedRoutes writes a route. */
function documentStyle(method: string, path: string): string {
  return `${method.toUpperCase()} ${path.replace(/:(\w+)/g, '{$1}')}`;
}

function servedBy(handler: Handler, prefix: string): string[] {
  if (handler.routes)
    return handler.routes.map(({ method, path }) => documentStyle(method, `${prefix}${path}`));
  if (handler.stack) return servedRoutes(handler.stack, prefix);
  if (handler.mount) return servedBy(handler.mount.handler, `${prefix}${handler.mount.path}`);
  return (handler.handlers ?? []).flatMap((inner) => servedBy(inner, prefix));
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

describeEachDialect('GET /openapi.json', () => {
  let h: Harness;
  let doc: any;
  beforeAll(async () => {
    h = await startSteward({
      config: { modulePaths: [fileURLToPath(new URL('../fixtures/modules', import.meta.url))] },
      overrides: { extraModules: [{ definition: gadget, origin: 'test' }] },
    });
    const res = await fetch(`${h.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    doc = await res.json();
  });
  afterAll(() => h.close());

  it('is a valid OpenAPI 3.1 document whose references all resolve', async () => {
    const validator = new Validator();
    // a copy: resolveRefs replaces the references in place
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(() => validator.resolveRefs()).not.toThrow();
  });

  it('documents every route express serves, and nothing it does not', () => {
    const served = servedRoutes(
      (h.steward.app as unknown as { router: { stack: Layer[] } }).router.stack,
    );
    expect(served).toEqual(
      expect.arrayContaining([
        'GET /healthz',
        'GET /openapi.json',
        'POST /api/v1beta1/resources/{urn}/actions/{action}',
      ]),
    );
    expect(served.length).toBeGreaterThanOrEqual(19);
    const documented = documentedRoutes(doc);
    // The console's files at /ui are HTML for a browser, not API (docs/console.md).
    const api = served.filter((route) => !/^GET \/ui(?:\/|$)/.test(route));
    expect(api.filter((route) => !documented.includes(route))).toEqual([]);
    expect(documented.filter((route) => !served.includes(route))).toEqual([]);
  });

  it('answers every documented error with the error body', () => {
    for (const [name, response] of Object.entries<any>(doc.components.responses)) {
      expect([name, response.content['application/json'].schema]).toEqual([
        name,
        { $ref: '#/components/schemas/Error' },
      ]);
    }
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const method of METHODS.filter((m) => item[m])) {
        const statuses = Object.keys(item[method].responses);
        expect([path, method, statuses.some((s) => s.startsWith('2'))]).toEqual([
          path,
          method,
          true,
        ]);
        if (path.startsWith('/api/'))
          expect([path, method, statuses]).toEqual([
            path,
            method,
            expect.arrayContaining(['400', '500']),
          ]);
      }
    }
  });

  it("includes the user's modules: STEWARD_MODULE_PATHS and in-process", () => {
    const schemas = doc.components.schemas;
    expect(doc['x-steward-kinds']).toEqual(expect.arrayContaining(['file', 'gadget', 'ledger']));
    expect(schemas['configs.ledger'].properties.steps).toMatchObject({ type: 'integer' });
    expect(schemas['configs.gadget'].properties.size).toEqual({
      $ref: '#/components/schemas/configs.gadget/definitions/size',
    });
    expect(schemas['params.gadget.resize'].required).toEqual(['size']);
    expect(schemas['dependencies.gadget'].properties.home.$ref).toBe('#/components/schemas/Urn');
    const create =
      doc.paths['/api/v1beta1/resources'].post.requestBody.content['application/json'].schema;
    expect(create.discriminator.mapping).toMatchObject({
      ledger: '#/components/schemas/create.ledger',
      gadget: '#/components/schemas/create.gadget',
    });
    expect(create.oneOf).toContainEqual({ $ref: '#/components/schemas/create.gadget' });
    expect(
      doc.paths['/api/v1beta1/resources/{urn}/execute'].post['x-steward-action-params'].gadget,
    ).toEqual({ resize: { $ref: '#/components/schemas/params.gadget.resize' } });
    expect(doc.paths['/api/v1beta1/modules/{kind}'].parameters[0].schema.enum).toContain('gadget');
  });

  it('has schemas that match what the server accepts and answers', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ ...doc, $id: 'openapi.json' });
    const check = (name: string, value: unknown) => {
      const validate = ajv.getSchema(`openapi.json#/components/schemas/${name}`)!;
      return validate(value) ? [] : validate.errors;
    };
    for (const name of Object.keys(doc.components.schemas))
      expect([name, typeof ajv.getSchema(`openapi.json#/components/schemas/${name}`)]).toEqual([
        name,
        'function',
      ]);

    const nested = {
      kind: 'gadget',
      project: 'p',
      name: 'g',
      labels: { team: 'a' },
      spec: { configs: { size: 2 } },
    };
    const flat = { kind: 'ledger', parent: 'p', name: 'l', configs: { steps: 1 } };
    expect(check('create.gadget', nested)).toEqual([]);
    expect(check('create.ledger', flat)).toEqual([]);
    expect(check('create.gadget', { ...nested, spec: { configs: { size: 0 } } })).not.toEqual([]);
    expect(check('create.gadget', { ...nested, kind: 'ledger' })).not.toEqual([]);

    const accepted = await call('POST', `${h.api}/resources`, nested);
    expect(accepted.status).toBe(202);
    expect(check('Accepted', accepted.body)).toEqual([]);
    expect(
      check('Resource', await waitForStatus(h.api, 'orn:steward:gadget:p:g', 'COMPLETED')),
    ).toEqual([]);
    expect(check('Module', (await call('GET', `${h.api}/modules/gadget`)).body)).toEqual([]);
    const revisions = await call('GET', `${h.api}/resources/orn:steward:gadget:p:g/revisions`);
    expect(check('Revision', revisions.body.revisions[0])).toEqual([]);
    const error = await call('POST', `${h.api}/resources`, { ...nested, kind: 'nope' });
    expect(error.status).toBe(400);
    expect(check('Error', error.body)).toEqual([]);
  });
});
