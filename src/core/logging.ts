import type { Logger } from '../sdk/index.js';

/** The logger core is handed: the SDK's Logger plus child loggers that carry fields. */
export interface CoreLogger extends Logger {
  child(fields: Record<string, unknown>): CoreLogger;
}

/** Discards everything; for tests and tools that do not log. */
export const silentLogger: CoreLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};
