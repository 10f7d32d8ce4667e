import { type IncomingHttpHeaders, request } from 'node:http';
import { parse as parseQuery } from 'node:querystring';

/** One `METHOD /path/{param}` of the OpenAPI document. */
export interface Endpoint {
  method: string;
  /** The path as documented, with `{param}` placeholders. */
  template: string;
  /** The names of its query parameters and of its header parameters (lower-case). */
  query: string[];
  headers: string[];
  /** Whether the document says it takes a request body. */
  body: boolean;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every operation of the served OpenAPI document, so an endpoint added later is fuzzed without a change here. */
export function endpointsOf(doc: any): Endpoint[] {
  const resolve = (p: any) =>
    typeof p?.$ref === 'string' ? doc.components.parameters[p.$ref.split('/').pop()] : p;
  return Object.entries<any>(doc.paths).flatMap(([template, item]) =>
    Object.keys(item)
      .filter((key) => METHODS.includes(key))
      .map((method) => {
        const parameters = [...(item.parameters ?? []), ...(item[method].parameters ?? [])].map(
          resolve,
        );
        return {
          method: method.toUpperCase(),
          template,
          query: parameters.filter((p) => p.in === 'query').map((p) => p.name as string),
          headers: parameters
            .filter((p) => p.in === 'header')
            .map((p) => (p.name as string).toLowerCase()),
          body: item[method].requestBody !== undefined,
        };
      }),
  );
}

export interface RawRequest {
  method: string;
  /** Sent as it is: already encoded (or deliberately not). */
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** undefined when the answer is a stream this client closed after the status line. */
  body: string | undefined;
}

/**
 * Sends exactly these bytes with node:http (fetch would normalise the path and refuse some
 * headers). An SSE answer, or a followed log, is closed after its status line and headers.
 */
export function sendRaw(origin: URL, req: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...req.headers, connection: 'close' };
    if (req.body !== undefined) headers['content-length'] = Buffer.byteLength(req.body);
    const outgoing = request(
      { host: origin.hostname, port: origin.port, method: req.method, path: req.path, headers },
      (res) => {
        const status = res.statusCode ?? 0;
        const type = String(res.headers['content-type'] ?? '');
        const endless =
          status >= 200 &&
          status < 300 &&
          (type.startsWith('text/event-stream') ||
            (type.startsWith('application/x-ndjson') && follows(req.path)));
        if (endless) {
          res.destroy();
          resolve({ status, headers: res.headers, body: undefined });
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    // A hang is a failure too: report it instead of waiting for jest's timeout.
    outgoing.setTimeout(ANSWER_WITHIN_MS, () =>
      outgoing.destroy(new Error(`no answer within ${ANSWER_WITHIN_MS} ms`)),
    );
    outgoing.end(req.body);
  });
}

const ANSWER_WITHIN_MS = 20_000;

/** `follow=true` as the API's query parser ('simple': node's querystring) reads it. */
function follows(path: string): boolean {
  const url = path.split('#')[0]!;
  const at = url.indexOf('?');
  return at >= 0 && parseQuery(url.slice(at + 1)).follow === 'true';
}
