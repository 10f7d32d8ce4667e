/** The module SDK: everything a module imports from Steward. */
export type * from './types.js';
export { ValidationError, TerminalError, isTerminalError } from './errors.js';
export { defineModule } from './define-module.js';
