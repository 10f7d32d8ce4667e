import { TerminalError, ValidationError } from '../../src/sdk/index.js';

/**
 * Variables `env` and `secret_env` may not set. STEWARD_ALLOWED_COMMANDS allows
 * programs; each of these would let the caller choose other code for an allowed
 * program to run: the dynamic loader's (LD_PRELOAD runs a library inside any
 * program), PATH (an allowed script's `#!/usr/bin/env node`, or a program that
 * runs another by name), and the start-up hooks of shells and common
 * interpreters (BASH_ENV runs a file before an allowed bash script, NODE_OPTIONS
 * can --require one before a node script).
 */
const REFUSED_NAMES = new Set([
  'PATH',
  'GCONV_PATH',
  'BASH_ENV',
  'ENV',
  'SHELLOPTS',
  'BASHOPTS',
  'PS4',
  'NODE_OPTIONS',
  'NODE_PATH',
  'PYTHONPATH',
  'PYTHONHOME',
  'PYTHONSTARTUP',
  'PERL5OPT',
  'PERL5LIB',
  'PERLLIB',
  'RUBYOPT',
  'RUBYLIB',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
]);
const REFUSED_PREFIXES = ['LD_', 'DYLD_'];

/** How the refusal lists them, for the error message and the docs. */
const REFUSED_ENV = [...REFUSED_PREFIXES.map((prefix) => `${prefix}*`), ...REFUSED_NAMES];

function isRefused(name: string): boolean {
  const upper = name.toUpperCase();
  return REFUSED_NAMES.has(upper) || REFUSED_PREFIXES.some((prefix) => upper.startsWith(prefix));
}

/** Why the configs' environment may not be used, or undefined. Pure (plan calls it); names only, never values. */
function envRefusal(configs: Record<string, unknown>): string | undefined {
  const refused = (['env', 'secret_env'] as const).flatMap((field) => {
    const value = configs[field];
    if (typeof value !== 'object' || value === null) return [];
    return Object.keys(value).filter(isRefused).map((name) => `${field}.${name}`);
  });
  if (refused.length === 0) return undefined;
  return (
    `${refused.join(', ')} may not be set: it would let the program load or run code that STEWARD_ALLOWED_COMMANDS does not allow ` +
    `(refused: ${REFUSED_ENV.join(', ')}; PATH is Steward's own)`
  );
}

/** For plan: 400, nothing stored. */
export function assertSafeEnv(configs: Record<string, unknown>): void {
  const problem = envRefusal(configs);
  if (problem) throw new ValidationError(problem, { refused_env: REFUSED_ENV });
}

/** For sync (a resource stored before this check, say): do not start it, do not retry. */
export function refuseUnsafeEnv(configs: Record<string, unknown>): void {
  const problem = envRefusal(configs);
  if (problem) throw new TerminalError(problem);
}
