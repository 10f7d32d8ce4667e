import { resolve } from 'node:path';

import { inheritedEnv } from './child-env.js';
import { parseEnvAllowList } from './env-allow-list.js';

/** What `process` and `job` both take from the operator: which programs, where their files go, how they run. */
export interface LocalProgramOptions {
  allowedCommands: readonly string[];
  allowedEnv?: readonly string[];
  runDir: string;
  logFileMaxBytes: number;
  stopGraceMs?: number;
  searchPath?: string;
  baseEnv?: Record<string, string>;
}

/** The options resolved once, with their defaults, for the module's sync and plan. */
export function resolveLocalProgram(options: LocalProgramOptions) {
  return {
    allowList: Object.freeze([...options.allowedCommands]),
    envAllowList: parseEnvAllowList(options.allowedEnv ?? []),
    runDir: resolve(options.runDir),
    logFileMaxBytes: options.logFileMaxBytes,
    stopGraceMs: options.stopGraceMs ?? 5000,
    searchPath: options.searchPath ?? process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    baseEnv: options.baseEnv ?? inheritedEnv(process.env),
  };
}
