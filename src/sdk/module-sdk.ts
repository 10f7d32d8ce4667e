import { defineModule } from './define-module.js';
import { TerminalError, ValidationError } from './errors.js';
import { Type } from './schema.js';
import { stepwise } from './steps.js';

/**
 * The SDK as one object, for modules outside the repository (they have no package to import
 * it from): a module whose default export (or `module.exports`) is a function is called with
 * this object by Steward's loader and by the contract kit, and what it returns is the module.
 *
 * @example
 * // index.js, anywhere STEWARD_MODULE_PATHS points
 * module.exports = ({ defineModule, stepwise, Type, TerminalError }) =>
 *   defineModule({ kind: 'note', description: 'A note.', configSchema: Type.Object({}), … });
 */
export const moduleSdk = Object.freeze({
  defineModule,
  stepwise,
  Type,
  TerminalError,
  ValidationError,
});

/**
 * The type of the object a module factory is given; annotate a TypeScript factory with it.
 *
 * @example
 * export default ({ defineModule, stepwise, Type }: ModuleSdk) => defineModule({ … });
 */
export type ModuleSdk = typeof moduleSdk;
