import winston from 'winston';

import type { CoreLogger } from './core/logging.js';

/** JSON lines on stdout; one child per component, sync lines carry urn and operationId. */
export function createLogger(level: string, stream?: NodeJS.WritableStream): CoreLogger {
  const transport = stream
    ? new winston.transports.Stream({ stream })
    : new winston.transports.Console();
  const root = winston.createLogger({
    level,
    format: winston.format.combine(
      winston.format.timestamp(),
      winston.format.errors({ stack: true }),
      winston.format.json(),
    ),
    transports: [transport],
  });
  return wrap(root);
}

/**
 * A line below the level is dropped before winston sees it: winston filters only in its
 * transport, after formatting (a timestamp and the JSON), which made every request's
 * debug line cost about 3 % of a GET's CPU at the default level (docs/decisions.md).
 * The level is fixed at creation (nothing changes it later).
 */
function wrap(logger: winston.Logger): CoreLogger {
  const enabled = (level: string) => logger.isLevelEnabled(level);
  const debug = enabled('debug');
  const info = enabled('info');
  const warn = enabled('warn');
  return {
    debug: debug ? (message, fields) => void logger.debug(message, fields) : () => undefined,
    info: info ? (message, fields) => void logger.info(message, fields) : () => undefined,
    warn: warn ? (message, fields) => void logger.warn(message, fields) : () => undefined,
    error: (message, fields) => void logger.error(message, fields),
    child: (fields) => wrap(logger.child(fields)),
  };
}
