/** The variables of Steward's own environment a program inherits; nothing else leaks (database URLs, tokens). */
export const INHERITED_VARIABLES = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'] as const;

/** Picks the inherited variables out of an environment (the factories call it once with process.env). */
export function inheritedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of INHERITED_VARIABLES) {
    const value = env[name];
    if (value !== undefined) picked[name] = value;
  }
  return picked;
}

/** The program's environment: the inherited variables, then `env`, then `secret_env` (later wins). */
export function childEnv(base: Record<string, string>, configs: { env?: Record<string, string>; secret_env?: Record<string, string> }): Record<string, string> {
  return { ...base, ...(configs.env ?? {}), ...(configs.secret_env ?? {}) };
}
