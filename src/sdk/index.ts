/** The module SDK: everything a module imports from Steward. */
export { defineModule } from './define-module.js';
export { isTerminalError, TerminalError, ValidationError } from './errors.js';
export type * from './types.js';
