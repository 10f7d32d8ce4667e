import type { Command } from 'commander';

import { contextOf } from './context.js';
import { segment } from './http-client.js';
import { block, fields, table } from './output.js';

/** What GET /modules/{kind} answers (describeModule in src/api/routes/modules.ts). */
interface ModuleDescription {
  kind: string;
  description: string;
  actions: Record<string, { description: string | null; params_schema: object | null }>;
  config_schema: JsonSchemaObject;
  output_schema: object | null;
  dependencies: Record<string, { kind: string; optional?: boolean }>;
  resync_interval_ms: number | null;
  has_logs: boolean;
}

interface JsonSchemaObject {
  properties?: Record<
    string,
    { type?: unknown; default?: unknown; description?: string; writeOnly?: boolean }
  >;
  required?: string[];
}

/** `steward module list|get`: the loaded kinds (`module test` is wired in src/cli.ts). */
export function registerModuleCommands(module: Command): void {
  module
    .command('list')
    .description('list the loaded kinds')
    .action(async (_options: object, command: Command) => {
      const { client, out } = contextOf(command);
      const { modules } = await client.request<{ modules: ModuleDescription[] }>('GET', '/modules');
      if (out.format === 'json') out.json({ modules });
      else
        out.line(
          table(
            ['KIND', 'ACTIONS', 'LOGS', 'DESCRIPTION'],
            modules.map((m) => [
              m.kind,
              Object.keys(m.actions).join(','),
              m.has_logs ? 'yes' : 'no',
              m.description,
            ]),
          ),
        );
    });

  module
    .command('get <kind>')
    .description("show a kind's actions, configs and dependencies")
    .action(async (kind: string, _options: object, command: Command) => {
      const { client, out } = contextOf(command);
      const found = await client.request<ModuleDescription>('GET', `/modules/${segment(kind)}`);
      if (out.format === 'json') out.json(found);
      else out.line(moduleDetails(found));
    });
}

function moduleDetails(m: ModuleDescription): string {
  const required = new Set(m.config_schema.required ?? []);
  const configs = Object.entries(m.config_schema.properties ?? {}).map(([name, p]) => [
    name,
    Array.isArray(p.type) ? p.type.join('|') : String(p.type ?? 'any'),
    required.has(name) ? 'yes' : 'no',
    p.default === undefined ? '-' : JSON.stringify(p.default),
    `${p.writeOnly ? '(secret) ' : ''}${p.description ?? ''}`,
  ]);
  const dependencies = Object.entries(m.dependencies);
  return [
    fields([
      ['kind', m.kind],
      ['description', m.description],
      ['logs', m.has_logs ? 'yes' : 'no'],
      ['resync', m.resync_interval_ms === null ? 'no' : `every ${m.resync_interval_ms} ms`],
    ]),
    '',
    table(
      ['ACTION', 'PARAMS', 'DESCRIPTION'],
      Object.entries(m.actions).map(([name, a]) => [
        name,
        a.params_schema ? 'yes' : '-',
        a.description ?? '',
      ]),
    ),
    '',
    configs.length
      ? table(['CONFIG', 'TYPE', 'REQUIRED', 'DEFAULT', 'DESCRIPTION'], configs)
      : 'configs: any object (see --output json for the schema)',
    ...(dependencies.length
      ? [
          '',
          table(
            ['DEPENDENCY', 'KIND', 'OPTIONAL'],
            dependencies.map(([name, d]) => [name, d.kind, d.optional ? 'yes' : 'no']),
          ),
        ]
      : []),
    ...Object.entries(m.actions)
      .filter(([, a]) => a.params_schema)
      .map(([name, a]) => `\n${block(`params of ${name}`, a.params_schema)}`),
  ].join('\n');
}
