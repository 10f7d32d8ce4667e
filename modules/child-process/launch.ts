import { stat } from 'node:fs/promises';

import { TerminalError } from '../../src/sdk/index.js';
import { assertAllowed, resolveCommand } from './allow-list.js';
import type { CommandConfigs } from './command-schema.js';
import { assertAllowedEnv, type EnvAllowEntry, refuseUnallowedEnv } from './env-allow-list.js';

/** The operator's rules a launch is checked against. */
export interface LaunchRules {
  allowList: readonly string[];
  envAllowList: readonly EnvAllowEntry[];
  searchPath: string;
}

/**
 * For plan: the command and the environment's names against the operator's lists, strings only (pure).
 * Throws ValidationError (400, nothing stored).
 */
export function assertLaunchAllowed(
  configs: CommandConfigs,
  rules: Pick<LaunchRules, 'allowList' | 'envAllowList'>,
): void {
  assertAllowed(String(configs.command), rules.allowList);
  assertAllowedEnv(configs, rules.envAllowList);
}

/**
 * For sync, right before a start: the same checks again (the settings may have changed since the
 * resource was stored), and the command resolved to an absolute path. Throws TerminalError:
 * retrying cannot help.
 */
export async function resolveLaunchCommand(
  configs: CommandConfigs,
  rules: LaunchRules,
): Promise<string> {
  const executable = await resolveCommand(configs.command, rules.allowList, rules.searchPath);
  refuseUnallowedEnv(configs, rules.envAllowList);
  return executable;
}

/** For sync: the working directory must exist; TerminalError otherwise. */
export async function assertWorkingDirectory(cwd: string): Promise<void> {
  const isDirectory = await stat(cwd).then(
    (info) => info.isDirectory(),
    () => false,
  );
  if (!isDirectory) throw new TerminalError(`cwd ${cwd} is not a directory`);
}

/** Both checks, for a start whose default working directory (`defaultCwd`) already exists. */
export async function resolveLaunch(
  configs: CommandConfigs,
  rules: LaunchRules,
  defaultCwd: string,
): Promise<{ executable: string; cwd: string }> {
  const executable = await resolveLaunchCommand(configs, rules);
  const cwd = configs.cwd ?? defaultCwd;
  await assertWorkingDirectory(cwd);
  return { executable, cwd };
}
