import { readFileSync } from 'node:fs';
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';

import type { CoreLogger } from '../core/logging.js';
import { bornWithPrototypes, type RequestPrototypes } from './born-with-prototypes.js';
import { answerClientErrors, refuseHttpVersion } from './client-errors.js';

/** Descriptors kept back from HTTP connections: the database, the worker's modules (files, pipes, sockets), logs. */
export const DESCRIPTOR_RESERVE = 256;
/** Where the open-files limit cannot be read (not Linux): the usual default soft limit. */
const ASSUMED_OPEN_FILES = 1024;
/** The fewest connections the cap allows, however low the open-files limit. */
const MIN_CONNECTIONS = 16;
const DROP_WARNING_INTERVAL_MS = 10_000;

export interface HttpServerSettings {
  /** STEWARD_HEADERS_TIMEOUT_MS */
  headersTimeoutMs: number;
  /** STEWARD_REQUEST_TIMEOUT_MS */
  requestTimeoutMs: number;
  /** STEWARD_MAX_CONNECTIONS; 0: as many as the open-files limit allows. */
  maxConnections: number;
}

/**
 * The HTTP server in front of the app, bounded so that connections cannot take every
 * file descriptor: a connection that sends no request head within the headers
 * timeout is answered 400 and closed (node checks every connection's clock on an
 * interval, which it reads only at construction: hence the options here), and at
 * most `connectionCap` connections are open at once, the rest closed as they arrive.
 */
export function createHttpServer(
  app: RequestListener & Partial<RequestPrototypes>,
  settings: HttpServerSettings,
  logger: CoreLogger,
  openFiles = readOpenFilesLimit(),
): Server {
  const headersTimeout = settings.headersTimeoutMs;
  // An express app's requests and responses are born with its prototypes (born-with-prototypes.ts).
  const born =
    app.request && app.response ? bornWithPrototypes(app as RequestPrototypes) : undefined;
  const server = createServer(
    {
      headersTimeout,
      requestTimeout: Math.max(settings.requestTimeoutMs, headersTimeout),
      // An idle keep-alive connection (between requests) is closed by this socket timeout, not by the headers timeout.
      keepAliveTimeout: Math.min(5000, headersTimeout),
      connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(headersTimeout / 4))),
      ...born,
    },
    (req: IncomingMessage, res: ServerResponse) => {
      // llhttp takes `GET /` (HTTP/0.9) and `HTTP/2.0` request lines; Steward speaks HTTP/1.x only.
      if (req.httpVersionMajor !== 1) refuseHttpVersion(req);
      else app(req, res);
    },
  );
  server.maxConnections = connectionCap(settings.maxConnections, openFiles);
  answerClientErrors(server);
  let warnedAt = -Infinity;
  server.on('drop', () => {
    const now = Date.now();
    if (now - warnedAt < DROP_WARNING_INTERVAL_MS) return;
    warnedAt = now;
    logger.warn('connections refused: too many open', {
      maxConnections: server.maxConnections,
      setting: 'STEWARD_MAX_CONNECTIONS',
    });
  });
  return server;
}

/** The setting, or the open-files limit less the reserve, whichever is smaller; never below a small floor. */
export function connectionCap(setting: number, openFiles: number | undefined): number {
  const allowed = Math.max(MIN_CONNECTIONS, (openFiles ?? ASSUMED_OPEN_FILES) - DESCRIPTOR_RESERVE);
  return setting > 0 ? Math.min(setting, allowed) : allowed;
}

/** The soft `nofile` limit of this process (Linux), or undefined when it cannot be read. */
export function readOpenFilesLimit(
  read: () => string = () => readFileSync('/proc/self/limits', 'utf8'),
): number | undefined {
  try {
    const match = /^Max open files\s+(\d+|unlimited)\s/m.exec(read());
    if (!match) return undefined;
    return match[1] === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(match[1]);
  } catch {
    return undefined;
  }
}
