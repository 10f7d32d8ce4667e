import type { Command } from 'commander';

import type { RotationReport } from '../core/secrets/secret-rotation.js';
import { CliError, EXIT } from './cli-error.js';
import { contextOf } from './context.js';
import { printerOf } from './context.js';
import { segment } from './http-client.js';
import { block } from './output.js';

interface SecretOutputAnswer {
  urn: string;
  version: number;
  output: Record<string, unknown>;
  unreadable: Array<{ field: string; key_id: string | null; message: string }>;
}

/**
 * `steward secrets rotate`: re-seal every stored secret with STEWARD_SECRET_KEY, on
 * the database of this machine's configuration (like `migrate`, it does not talk to
 * the API). `steward secrets get URN`: the admin's read of a resource's secret
 * outputs, through the API.
 */
export function registerSecretsCommands(program: Command): void {
  const secrets = program
    .command('secrets')
    .description("secrets at rest: rotate the key; read a resource's secret outputs (admin)");

  secrets
    .command('rotate')
    .description(
      'seal every stored secret with STEWARD_SECRET_KEY: values of older keys (STEWARD_SECRET_KEYS_PREVIOUS) and plaintext ones; safe to run again',
    )
    .option('--batch-size <n>', 'resources per transaction', '200')
    .option(
      '--forget-unreadable',
      'drop the secrets no configured key opens (their key is lost for good; set them again with a PATCH)',
    )
    .action(
      async (options: { batchSize: string; forgetUnreadable?: boolean }, command: Command) => {
        const out = printerOf(command);
        const batchSize = Number(options.batchSize);
        if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000)
          throw new CliError('--batch-size must be a whole number from 1 to 10000', EXIT.usage);
        const { rotateWithConfiguration } = await import('./secrets-rotate.js');
        const report = await rotateWithConfiguration({
          batchSize,
          forget: options.forgetUnreadable === true,
          onBatch: (so) =>
            out.interactive
              ? out.redraw(`${so.resources} resources read, ${so.rewritten} rewritten`)
              : undefined,
        });
        if (out.interactive) out.redraw('');
        if (out.format === 'json') out.json(report);
        else out.line(rotationText(report, options.forgetUnreadable === true));
        if (report.changed.length || (report.unreadable.length && !options.forgetUnreadable)) {
          throw new CliError(
            report.changed.length
              ? `${report.changed.length} resource(s) kept changing during the rotation; run it again`
              : `${report.unreadable.length} secret(s) are sealed with a key that is not configured; keep that key in STEWARD_SECRET_KEYS_PREVIOUS and run again, or drop them with --forget-unreadable`,
            EXIT.failure,
          );
        }
        const hooks = report.webhooks;
        if (hooks.changed.length || hooks.unreadable.length) {
          throw new CliError(
            hooks.changed.length
              ? `${hooks.changed.length} webhook(s) kept changing during the rotation; run it again`
              : `${hooks.unreadable.length} webhook secret(s) are sealed with a key that is not configured; keep that key in STEWARD_SECRET_KEYS_PREVIOUS and run again, or delete and create those webhooks again`,
            EXIT.failure,
          );
        }
      },
    );

  secrets
    .command('get <urn>')
    .description("show a resource's secret outputs (admin role; the read is audited)")
    .action(async (urn: string, _options: object, command: Command) => {
      const { client, out } = contextOf(command);
      const answer = await client.request<SecretOutputAnswer>(
        'GET',
        `/resources/${segment(urn)}/secrets`,
      );
      if (out.format === 'json') out.json(answer);
      else out.line(block('output', answer.output));
      for (const u of answer.unreadable) out.note(`cannot open ${u.field}: ${u.message}`);
    });
}

function rotationText(report: RotationReport, forget: boolean): string {
  const lines = [
    `secrets sealed with key ${report.key_id}: ${report.resources} resources read, ${report.rewritten} rewritten`,
    `  ${report.resealed} values re-sealed from older keys, ${report.sealed} plaintext values sealed, ${report.current} already sealed with this key`,
    `  ${report.unreadable.length} values no configured key opens${forget ? ` (${report.forgotten} dropped)` : ''}`,
    ...report.unreadable.map(
      (u) => `    ${u.urn} ${u.field}: ${u.key_id ? `key ${u.key_id}` : 'malformed'}`,
    ),
  ];
  if (report.kinds_not_loaded.length)
    lines.push(
      `  kinds with no loaded module (their plaintext secrets cannot be found): ${report.kinds_not_loaded.join(', ')}`,
    );
  if (report.changed.length)
    lines.push(`  changed during the rotation (run it again): ${report.changed.join(', ')}`);
  const hooks = report.webhooks;
  lines.push(
    `webhook secrets: ${hooks.webhooks} webhooks read, ${hooks.resealed} re-sealed from older keys, ${hooks.sealed} plaintext sealed, ${hooks.current} already sealed with this key`,
    ...hooks.unreadable.map((u) => `    ${u.id}: ${u.key_id ? `key ${u.key_id}` : 'malformed'}`),
  );
  if (hooks.changed.length)
    lines.push(`  changed during the rotation (run it again): ${hooks.changed.join(', ')}`);
  return lines.join('\n');
}
