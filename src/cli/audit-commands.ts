import type { Command } from 'commander';

import type { AuditEntry } from './api-documents.js';
import { contextOf } from './context.js';
import { table } from './output.js';
import { collectPages, parseLimit } from './pages.js';

interface ListFlags {
  project?: string;
  actor?: string;
  action?: string;
  since?: string;
  until?: string;
  limit?: string;
}

/** `steward audit …`: who did what (/api/v1beta1/audit, docs/api.md#audit). */
export function registerAuditCommands(program: Command): void {
  const audit = program
    .command('audit')
    .description('who did what: every write and every refusal (admins only)');

  // The filters go to the server as given: a bad one is its 400, naming it.
  audit
    .command('list')
    .description('list audit entries, newest first')
    .option('--project <project>', "only this project's entries")
    .option('--actor <name>', 'only this token name (anonymous in open mode)')
    .option('--action <action>', 'an HTTP method (PATCH) or an action name (resource.update)')
    .option('--since <time>', 'entries at or after this RFC 3339 time (2026-01-31T12:00:00Z)')
    .option('--until <time>', 'entries before this RFC 3339 time')
    .option('--limit <n>', 'at most this many (default: all)')
    .action(async (options: ListFlags, command: Command) => {
      const { client, out } = contextOf(command);
      const listing = await collectPages<AuditEntry>(
        client,
        '/audit',
        'entries',
        {
          project: options.project,
          actor: options.actor,
          action: options.action,
          since: options.since,
          until: options.until,
        },
        parseLimit(options.limit),
      );
      if (out.format === 'json')
        out.json({ entries: listing.items, next_page_token: listing.next_page_token });
      else out.line(auditTable(listing.items));
    });
}

function auditTable(entries: readonly AuditEntry[]): string {
  if (entries.length === 0) return 'no audit entries';
  return table(
    ['ID', 'AT', 'ACTOR', 'PROJECT', 'METHOD', 'ACTION', 'STATUS', 'TARGET'],
    entries.map((e) => [
      String(e.id),
      e.at,
      e.actor,
      e.project ?? '-',
      e.method,
      e.action,
      statusText(e),
      e.urn ?? e.operation_id ?? e.path,
    ]),
  );
}

/** `202`, `403 permission_denied`, `202 dry run`. */
function statusText(e: AuditEntry): string {
  return [String(e.status), e.code, e.dry_run ? 'dry run' : null].filter(Boolean).join(' ');
}
