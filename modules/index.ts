import type { ModuleDefinition } from '../src/sdk/index.js';
import { createFileModule } from './file/index.js';

export interface BuiltinModuleOptions {
  fileRoot: string;
}

/** The modules shipped with Steward, built from the operator's configuration. */
export function builtinModules(options: BuiltinModuleOptions): Array<{ definition: ModuleDefinition; origin: string }> {
  return [{ definition: createFileModule({ root: options.fileRoot }), origin: 'modules/file' }];
}
