import { delimiter, isAbsolute } from 'node:path';

/**
 * The one variable of Steward's own environment every program gets: PATH, with Steward's value and only its
 * absolute entries, so a `#!/usr/bin/env python3` script finds the interpreter the operator installed. Everything
 * else starts empty (issue 11: "the child starts from an empty environment plus those"): HOME, USER, LANG, TZ and
 * the rest reach a program only when STEWARD_ALLOWED_ENV allows the name and the resource's `env` sets it. Nothing
 * of Steward's environment (STEWARD_DB, STEWARD_SECRET_KEY, PGPASSWORD, proxies, HOME's dotfiles) is passed on.
 */
export const INHERITED_VARIABLES = ['PATH'] as const;

/** Picks the inherited variables out of an environment (the factories call it once with process.env). */
export function inheritedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of INHERITED_VARIABLES) {
    const value = env[name];
    if (value !== undefined) picked[name] = name === 'PATH' ? absoluteEntries(value) : value;
  }
  return picked;
}

/**
 * A relative PATH entry ('.', '', 'bin') is looked up in the program's working directory, which the caller
 * chooses (`cwd`): `#!/usr/bin/env python3` would run a `python3` the file module wrote there. Only absolute
 * entries are kept, as resolveCommand does for the command itself.
 */
function absoluteEntries(path: string): string {
  return path
    .split(delimiter)
    .filter((entry) => isAbsolute(entry))
    .join(delimiter);
}

/**
 * The program's environment: the inherited variables, then `env`, then `secret_env` (later wins). Only what
 * STEWARD_ALLOWED_ENV allows gets here: plan and sync refuse the rest (env-allow-list.ts).
 */
export function childEnv(
  base: Record<string, string>,
  configs: { env?: Record<string, string>; secret_env?: Record<string, string> },
): Record<string, string> {
  return { ...base, ...(configs.env ?? {}), ...(configs.secret_env ?? {}) };
}
