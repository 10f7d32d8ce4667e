/** `${NAME}`: upper-case letters, digits and `_`, so a JavaScript template such as `${name}` in an argument is left alone. */
const PLACEHOLDER = /\$(\$?)\{([A-Z_][A-Z0-9_]*)\}/g;

/**
 * Replaces every `${NAME}` in the text of an example or fixture file with the
 * variable's value from `env`, before the text is parsed as JSON. The value is
 * inserted JSON-escaped (quotes and backslashes cannot break the document), so
 * `"${PGPASSWORD}"` becomes a string and a bare `${PGPORT}` a number. `$${NAME}`
 * is written as a literal `${NAME}`. A variable that is not set is an error naming it.
 *
 * @example
 * substitute('{"port": ${PGPORT}, "host": "${PGHOST}"}', { PGPORT: '5433', PGHOST: '127.0.0.1' });
 * // '{"port": 5433, "host": "127.0.0.1"}'
 */
export function substitute(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const missing = new Set<string>();
  const replaced = text.replace(PLACEHOLDER, (_whole, escaped: string, name: string) => {
    if (escaped) return `\${${name}}`;
    const value = env[name];
    if (value === undefined) {
      missing.add(name);
      return '';
    }
    return JSON.stringify(value).slice(1, -1);
  });
  if (missing.size) {
    const names = [...missing].map((name) => `\${${name}}`).join(', ');
    throw new Error(`${names} ${missing.size === 1 ? 'is' : 'are'} not set in the environment`);
  }
  return replaced;
}
