import { delimiter, isAbsolute } from 'node:path';

/**
 * The variables of Steward's own environment every program gets, with Steward's values (a resource cannot set
 * them unless STEWARD_ALLOWED_ENV allows it): the ones a login or a service manager gives every program, which
 * programs assume are there (PATH finds a `#!/usr/bin/env python3` script's interpreter; HOME, USER and LOGNAME;
 * LANG and LC_ALL, the text encoding), and TZ and TMPDIR, which the operator sets for a reason. None is a secret;
 * nothing else of Steward's environment (STEWARD_DB, STEWARD_SECRET_KEY, PGPASSWORD, proxies) reaches a program.
 */
export const INHERITED_VARIABLES = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'] as const;

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
export function childEnv(base: Record<string, string>, configs: { env?: Record<string, string>; secret_env?: Record<string, string> }): Record<string, string> {
  return { ...base, ...(configs.env ?? {}), ...(configs.secret_env ?? {}) };
}
