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

function wrap(logger: winston.Logger): CoreLogger {
  return {
    debug: (message, fields) => void logger.debug(message, fields),
    info: (message, fields) => void logger.info(message, fields),
    warn: (message, fields) => void logger.warn(message, fields),
    error: (message, fields) => void logger.error(message, fields),
    child: (fields) => wrap(logger.child(fields)),
  };
}
