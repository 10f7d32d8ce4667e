import { defineModule, type ModuleDefinition } from '../../src/sdk/index.js';
import { observeFile } from './observe.js';
import { fileClaimKey } from './paths.js';
import type { FileData } from './plan.js';
import {
  chmodParamsSchema,
  configSchema,
  type FileConfigs,
  type FileOutput,
  outputSchema,
} from './schema.js';
import { fileSteps } from './sync.js';

export interface FileModuleOptions {
  /** The only directory this module writes in (STEWARD_FILE_ROOT); each project has its own directory in it. */
  root: string;
}

/** `file`: a file in its project's directory under the operator's root, with its content and mode. */
export function createFileModule({ root }: FileModuleOptions): ModuleDefinition {
  return defineModule<FileConfigs, FileOutput, FileData>({
    kind: 'file',
    description:
      "A file in its project's directory under the configured file root (STEWARD_FILE_ROOT/<project>): content and mode. Steps: write, chmod.",
    configSchema,
    outputSchema,
    actions: {
      create: { description: 'Write the file and set its mode.' },
      update: { description: 'Rewrite the file; a new path moves it.' },
      delete: { description: 'Remove the file.' },
      touch: {
        description: 'Set the modification time to now (re-creating the file if it went missing).',
      },
      chmod: { description: 'Change the mode.', paramsSchema: chmodParamsSchema },
    },
    // One resource per file: a second create or move onto a held path is 409.
    claimKey: ({ project, configs }) => fileClaimKey(project, configs.path),
    ...fileSteps(root),
    observe: (input) => observeFile(root, input),
  });
}
