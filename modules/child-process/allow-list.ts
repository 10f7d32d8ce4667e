import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';

import { TerminalError, ValidationError } from '../../src/sdk/index.js';

const VARIABLE = 'STEWARD_ALLOWED_COMMANDS';

/**
 * Why `command` may not run, or undefined when it may. Pure string comparison
 * (plan calls it): an entry that is an absolute path allows exactly that path, a
 * bare name allows exactly that bare name (looked up on PATH at sync).
 */
export function refusal(command: string, allowList: readonly string[]): string | undefined {
  if (command.includes('/') && !isAbsolute(command))
    return `command "${command}" must be an absolute path or a bare name looked up on PATH`;
  if (allowList.includes(command)) return undefined;
  const wanted = [...allowList, command].join(',');
  if (allowList.length === 0) {
    return `command "${command}" is not allowed: this Steward allows no commands; set ${VARIABLE}=${wanted} (comma-separated absolute paths or bare names) and restart it`;
  }
  return `command "${command}" is not allowed (allowed: ${allowList.join(', ')}); set ${VARIABLE}=${wanted} and restart Steward to allow it`;
}

/** For plan: rejects a command the operator did not allow (400, nothing stored). */
export function assertAllowed(command: string, allowList: readonly string[]): void {
  const problem = refusal(command, allowList);
  if (problem) throw new ValidationError(problem, { command, allowed_commands: [...allowList] });
}

/**
 * For sync: checks the allow-list again (it may have changed since the request was
 * accepted) and resolves a bare name on Steward's PATH. Throws TerminalError when
 * the command may not or cannot run.
 */
export async function resolveCommand(
  command: string,
  allowList: readonly string[],
  searchPath: string,
): Promise<string> {
  const problem = refusal(command, allowList);
  if (problem) throw new TerminalError(problem);
  if (isAbsolute(command)) {
    if (!(await isExecutableFile(command)))
      throw new TerminalError(`command ${command} is not an executable file`);
    return command;
  }
  for (const dir of searchPath.split(delimiter)) {
    if (!isAbsolute(dir)) continue; // a relative PATH entry would depend on the working directory
    const candidate = join(dir, command);
    if (await isExecutableFile(candidate)) return candidate;
  }
  throw new TerminalError(`command "${command}" was not found on PATH (${searchPath})`);
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
