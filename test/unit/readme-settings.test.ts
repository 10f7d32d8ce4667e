import { readFileSync } from 'node:fs';

import { describeSettings } from '../../src/config.js';

/** The rows of README.md's configuration table: variable → default as written there. */
function readmeRows(): Map<string, string> {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(
    readme.indexOf('## Configuration'),
    readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1),
  );
  const rows = new Map<string, string>();
  for (const match of section.matchAll(/^\| `(STEWARD_[A-Z0-9_]+)` \| ([^|]+) \|/gm))
    rows.set(match[1]!, match[2]!.trim());
  return rows;
}

/** How the table writes a default: `value` in backticks, or "none" for no value or an empty list. */
function written(fallback: unknown): string {
  if (fallback === undefined || (Array.isArray(fallback) && fallback.length === 0)) return 'none';
  return `\`${Array.isArray(fallback) ? fallback.join(',') : String(fallback)}\``;
}

describe('the settings table in README.md', () => {
  const rows = readmeRows();
  const settings = describeSettings();

  it('lists every setting of src/config.ts with its default', () => {
    const documented = settings.map(({ variable }) => [variable, rows.get(variable)]);
    expect(documented).toEqual(
      settings.map(({ variable, fallback }) => [variable, written(fallback)]),
    );
  });

  it('lists nothing that src/config.ts does not read (but STEWARD_CONFIG_FILE, which names the file it reads)', () => {
    const known = new Set([...settings.map((setting) => setting.variable), 'STEWARD_CONFIG_FILE']);
    expect([...rows.keys()].filter((variable) => !known.has(variable))).toEqual([]);
  });
});
