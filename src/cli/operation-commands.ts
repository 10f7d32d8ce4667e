import type { Command } from 'commander';

import type { Operation } from './api-documents.js';
import { contextOf } from './context.js';
import { segment } from './http-client.js';
import { age, fields, table } from './output.js';
import { collectPages, parseLimit } from './pages.js';

/** `steward operation …`: track and cancel accepted work (/api/v1beta1/operations). */
export function registerOperationCommands(program: Command): void {
  const operation = program.command('operation').description('track and cancel accepted work');

  operation
    .command('list')
    .description('list operations, newest first')
    .option('--urn <urn>', "only this resource's operations")
    .option('--status <status>', 'only queued, running, succeeded, failed or cancelled')
    .option('--limit <n>', 'at most this many (default: all)')
    .action(
      async (options: { urn?: string; status?: string; limit?: string }, command: Command) => {
        const { client, out } = contextOf(command);
        const listing = await collectPages<Operation>(
          client,
          '/operations',
          'operations',
          { urn: options.urn, status: options.status },
          parseLimit(options.limit),
        );
        if (out.format === 'json')
          out.json({ operations: listing.items, next_page_token: listing.next_page_token });
        else out.line(operationTable(listing.items));
      },
    );

  operation
    .command('get <id>')
    .description('show one operation')
    .action(async (id: string, _options: object, command: Command) => {
      const { client, out } = contextOf(command);
      const found = await client.request<Operation>('GET', `/operations/${segment(id)}`);
      if (out.format === 'json') out.json(found);
      else out.line(operationDetails(found));
    });

  operation
    .command('cancel <id>')
    .description(
      'cancel a queued or running operation (its resource goes to ERROR; retry resumes it)',
    )
    .action(async (id: string, _options: object, command: Command) => {
      const { client, out } = contextOf(command);
      const cancelled = await client.request<Operation>(
        'POST',
        `/operations/${segment(id)}/cancel`,
      );
      if (out.format === 'json') out.json(cancelled);
      else
        out.line(
          `${cancelled.id} (${cancelled.action} of ${cancelled.urn}) ${cancelled.status}: ${cancelled.error ?? ''}`.trimEnd(),
        );
    });
}

function operationTable(operations: readonly Operation[]): string {
  if (operations.length === 0) return 'no operations';
  return table(
    ['ID', 'URN', 'ACTION', 'STATUS', 'VERSION', 'ATTEMPTS', 'CREATED', 'ERROR'],
    operations.map((o) => [
      o.id,
      o.urn,
      o.action,
      o.status,
      String(o.version),
      String(o.attempts),
      age(o.created_at),
      o.error ?? '',
    ]),
  );
}

function operationDetails(o: Operation): string {
  return fields([
    ['id', o.id],
    ['urn', o.urn],
    ['action', o.action],
    ['params', JSON.stringify(o.params ?? {})],
    ['status', o.status],
    ['version', String(o.version)],
    ['attempts', String(o.attempts)],
    ['error', o.error ?? '-'],
    ['created', `${o.created_at} by ${o.created_by}`],
    ['started', o.started_at ?? '-'],
    ['finished', o.finished_at ?? '-'],
  ]);
}
