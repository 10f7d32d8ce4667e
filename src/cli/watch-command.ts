import type { Command } from 'commander';

import type { EventRecord } from './api-documents.js';
import { CliError, EXIT } from './cli-error.js';
import { contextOf } from './context.js';
import { watchEvents } from './event-stream.js';
import { oneLine } from './output.js';
import { parseLimit } from './pages.js';

/** `steward watch`: the event stream, one line an event, until interrupted (or --count events). */
export function registerWatchCommand(program: Command): void {
  program
    .command('watch')
    .description(
      'print events as they happen; reconnects with Last-Event-ID when the connection drops',
    )
    .option('--project <project>', "only this project's events")
    .option('--kind <kind>', "only this kind's events")
    .option('--urn <urn>', "only this resource's events")
    .option(
      '--since <id>',
      'start after this event id instead of now (the id column, or a previous watch)',
    )
    .option('--count <n>', 'exit after this many events')
    .option(
      '--idle-timeout <seconds>',
      'reconnect when nothing, not even a heartbeat, arrived for this long',
      '60',
    )
    .action(
      async (
        options: {
          project?: string;
          kind?: string;
          urn?: string;
          since?: string;
          count?: string;
          idleTimeout: string;
        },
        command: Command,
      ) => {
        const { client, out } = contextOf(command);
        const count = parseLimit(options.count);
        const idleSeconds = Number(options.idleTimeout);
        if (!Number.isFinite(idleSeconds) || idleSeconds <= 0)
          throw new CliError('--idle-timeout must be a positive number of seconds', EXIT.usage);
        if (options.since !== undefined && !/^\d{1,15}$/.test(options.since))
          throw new CliError('--since must be an event id (a whole number)', EXIT.usage);
        const events = watchEvents(client, {
          filter: { project: options.project, kind: options.kind, urn: options.urn },
          since: options.since,
          idleTimeoutMs: idleSeconds * 1000,
          note: out.note,
        });
        let seen = 0;
        for await (const event of events) {
          if (out.format === 'json') out.jsonLine(event);
          else out.line(eventLine(event));
          seen += 1;
          if (count !== undefined && seen >= count) break;
        }
      },
    );
}

/** `42  2026-…Z  resource.status_changed  orn:…  PENDING -> COMPLETED action=create` */
export function eventLine(event: EventRecord): string {
  const { from, to, ...rest } = event.data as { from?: unknown; to?: unknown } & Record<
    string,
    unknown
  >;
  const details = [
    ...(from !== undefined || to !== undefined
      ? [`${String(from ?? '?')} -> ${String(to ?? '?')}`]
      : []),
    ...Object.entries(rest).map(
      ([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`,
    ),
  ].join(' ');
  return [String(event.id), event.created_at, event.type.padEnd(24), event.urn, oneLine(details)]
    .join('  ')
    .trimEnd();
}
