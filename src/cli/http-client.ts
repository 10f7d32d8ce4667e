import { randomUUID } from 'node:crypto';

import type { components } from './api-types.js';
import { CliError, EXIT } from './cli-error.js';

/** The error body every non-2xx answer carries, as the OpenAPI document has it (api-types.ts is generated from it). */
type ErrorBody = components['schemas']['Error'];

/** Where the client commands send their requests when neither --url nor STEWARD_URL says. */
export const DEFAULT_URL = 'http://127.0.0.1:8080';
const API_PREFIX = '/api/v1beta1';

/** An error answer of the API: `{"error": {"code", "message", "details"}}`. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown,
  ) {
    super(message, EXIT.failure);
    this.name = 'ApiError';
  }
}

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface ApiClient {
  readonly baseUrl: string;
  /** A JSON request under /api/v1beta1; a non-2xx answer throws ApiError with the server's message. */
  request<T>(method: string, path: string, options?: RequestOptions): Promise<T>;
  /** A GET whose body the caller reads as a stream (logs, events); a non-2xx answer throws ApiError. */
  stream(path: string, options?: RequestOptions): Promise<Response>;
}

/** The methods that write: each request gets an Idempotency-Key, kept by its retries. */
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/**
 * Failures where the request may or may not have reached Steward (refused while it restarts,
 * reset or timed out mid-answer). A write is sent again only because its key makes it safe.
 */
const RETRIED_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

export interface ClientOptions {
  /** The waits before each retry of a write; its length is how many retries. @default [250, 1000, 3000] */
  retryDelaysMs?: readonly number[];
}

/** `token`: sent as `Authorization: Bearer <token>` on every request (STEWARD_TOKEN). */
export function createApiClient(
  baseUrl: string,
  token?: string,
  { retryDelaysMs = [250, 1000, 3000] }: ClientOptions = {},
): ApiClient {
  const root = baseUrl.replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]/.test(root))
    throw new CliError(`the Steward URL must be http:// or https://, not "${baseUrl}"`, EXIT.usage);

  const send = async (method: string, path: string, options: RequestOptions): Promise<Response> => {
    const url = new URL(`${root}${API_PREFIX}${path}`);
    for (const [key, value] of Object.entries(options.query ?? {}))
      if (value !== undefined) url.searchParams.set(key, String(value));
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    // One key for the write and all its retries: Steward replays the first answer to a retry.
    if (WRITES.has(method) && !Object.keys(headers).some((name) => /^idempotency-key$/i.test(name)))
      headers['idempotency-key'] = randomUUID();
    const retries = WRITES.has(method) ? retryDelaysMs : [];
    let res: Response;
    for (let attempt = 0; ; attempt += 1) {
      try {
        res = await fetch(url, { method, headers, body, signal: options.signal });
      } catch (err) {
        if (options.signal?.aborted) throw err;
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        if (attempt < retries.length && RETRIED_CODES.has(cause?.code ?? '')) {
          await sleep(retries[attempt]!);
          continue;
        }
        throw new CliError(
          `cannot reach Steward at ${root}: ${cause?.code ?? cause?.message ?? (err as Error).message}`,
          EXIT.unreachable,
        );
      }
      // The first try of this key is still being answered (the connection dropped, the server did not): wait for it.
      if (attempt < retries.length && res.status === 409 && (await isKeyInUse(res))) {
        await sleep(retries[attempt]!);
        continue;
      }
      break;
    }
    if (!res.ok) throw await toApiError(res);
    return res;
  };

  return {
    baseUrl: root,
    async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
      const res = await send(method, path, options);
      const text = await res.text();
      try {
        return (text ? JSON.parse(text) : undefined) as T;
      } catch {
        throw new CliError(
          `${method} ${path} answered ${res.status} with a body that is not JSON`,
          EXIT.failure,
        );
      }
    },
    stream: (path, options = {}) => send('GET', path, options),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A 409 `idempotency_key_in_use` (read from a clone: any other 409 is reported as it is). */
async function isKeyInUse(res: Response): Promise<boolean> {
  const text = await res
    .clone()
    .text()
    .catch(() => '');
  return text.includes('"idempotency_key_in_use"');
}

async function toApiError(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  try {
    // Parsed as the document says, checked as anything else: a proxy in between may answer otherwise.
    const { error } = JSON.parse(text) as Partial<
      Record<keyof ErrorBody, Partial<ErrorBody['error']>>
    >;
    if (error && typeof error.message === 'string')
      return new ApiError(
        res.status,
        String(error.code ?? 'unknown'),
        error.message,
        error.details,
      );
  } catch {
    // not the error shape: report the status and the start of the body
  }
  return new ApiError(
    res.status,
    'unknown',
    `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`,
    undefined,
  );
}

/** A URN or an id as a path segment: URNs keep their colons (the API takes them as they are). */
export function segment(value: string): string {
  return encodeURIComponent(value).replace(/%3A/gi, ':');
}
