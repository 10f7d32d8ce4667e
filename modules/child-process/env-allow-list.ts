import { TerminalError, ValidationError } from '../../src/sdk/index.js';
import type { CommandConfigs } from './command-schema.js';

const VARIABLE = 'STEWARD_ALLOWED_ENV';
const NAME_OR_PREFIX = /^[A-Za-z_][A-Za-z0-9_]*\*?$/;

/** One entry of STEWARD_ALLOWED_ENV: a name or a prefix (`APP_*`), for every command or for one. */
export interface EnvAllowEntry {
  /** The command exactly as written in STEWARD_ALLOWED_COMMANDS; undefined: every allowed command. */
  command?: string;
  name: string;
  prefix: boolean;
}

/** Why one STEWARD_ALLOWED_ENV entry is not valid, or undefined (src/config.ts checks the setting with it too). */
export function envEntryProblem(entry: string): string | undefined {
  const at = entry.lastIndexOf(':'); // a variable name has no ':', a command might
  const command = at === -1 ? undefined : entry.slice(0, at);
  const name = entry.slice(at + 1);
  if (command !== undefined && command.trim() === '')
    return `"${entry}" has nothing before ':' (write COMMAND:NAME, or NAME alone for every command)`;
  if (name === '*')
    return `"${entry}" would allow every variable, LD_PRELOAD and BASH_ENV included: list names, or prefixes such as APP_*`;
  if (!NAME_OR_PREFIX.test(name))
    return `"${entry}": "${name}" is not a variable name, or a name prefix ending in * (letters, digits and _)`;
  return undefined;
}

/** Parses the entries (throws on a bad one, naming it: a caller constructing a module fails at once). */
export function parseEnvAllowList(entries: readonly string[]): readonly EnvAllowEntry[] {
  const problems = entries.map(envEntryProblem).filter((problem) => problem !== undefined);
  if (problems.length) throw new Error(`${VARIABLE}: ${problems.join('; ')}`);
  return Object.freeze(
    entries.map((entry) => {
      const at = entry.lastIndexOf(':');
      const name = entry.slice(at + 1);
      const prefix = name.endsWith('*');
      return Object.freeze({
        ...(at === -1 ? {} : { command: entry.slice(0, at) }),
        name: prefix ? name.slice(0, -1) : name,
        prefix,
      });
    }),
  );
}

/** What the environment checks read of the configs. */
type EnvConfigs = Pick<CommandConfigs, 'command' | 'env' | 'secret_env'>;

/** Names are compared exactly, letter case included, as the kernel and every program compare them. */
function isAllowed(name: string, command: string, allowList: readonly EnvAllowEntry[]): boolean {
  return allowList.some(
    (entry) =>
      (entry.command === undefined || entry.command === command) &&
      (entry.prefix ? name.startsWith(entry.name) : name === entry.name),
  );
}

/** The `env` and `secret_env` names not allowed for `command`, each once, in the order given. */
function notAllowed(
  command: string,
  configs: EnvConfigs,
  allowList: readonly EnvAllowEntry[],
): string[] {
  const names = (['env', 'secret_env'] as const).flatMap((field) => {
    const value = configs[field];
    return typeof value === 'object' && value !== null ? Object.keys(value) : [];
  });
  return [...new Set(names)].filter((name) => !isAllowed(name, command, allowList));
}

/** Why the configs' environment may not be used, or undefined. Pure (plan calls it); names only, never values. */
function envRefusal(
  configs: EnvConfigs,
  allowList: readonly EnvAllowEntry[],
): { message: string; names: string[] } | undefined {
  const command = String(configs.command);
  const names = notAllowed(command, configs, allowList);
  if (names.length === 0) return undefined;
  const message =
    `environment variable${names.length > 1 ? 's' : ''} ${names.join(', ')} ${names.length > 1 ? 'are' : 'is'} not allowed for command "${command}": ` +
    `a program only gets the variables the operator allows, since a variable can make it run other code; ` +
    `to allow ${names.length > 1 ? 'them' : 'it'}, add ${names.map((name) => `${command}:${name}`).join(',')} ` +
    `(or ${names.join(',')} for every command) to ${VARIABLE} and restart Steward`;
  return { message, names };
}

/** For plan: 400, nothing stored. */
export function assertAllowedEnv(configs: EnvConfigs, allowList: readonly EnvAllowEntry[]): void {
  const refused = envRefusal(configs, allowList);
  if (refused)
    throw new ValidationError(refused.message, {
      not_allowed_env: refused.names,
      setting: VARIABLE,
    });
}

/** For sync (a resource stored before the setting changed): do not start it, do not retry. */
export function refuseUnallowedEnv(configs: EnvConfigs, allowList: readonly EnvAllowEntry[]): void {
  const refused = envRefusal(configs, allowList);
  if (refused) throw new TerminalError(refused.message);
}
