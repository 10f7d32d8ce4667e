import type { Command } from 'commander';

import type { Schedule } from './api-documents.js';
import { CliError, EXIT } from './cli-error.js';
import { contextOf } from './context.js';
import { segment } from './http-client.js';
import { readObjectOption } from './input.js';
import { collectPages, parseLimit } from './pages.js';
import { scheduleDetails, scheduleTable } from './schedule-views.js';

interface CreateFlags {
  action?: string;
  params?: string;
  configs?: string;
  at?: string;
  cron?: string;
  tz?: string;
  expiresAt?: string;
}

/** `steward schedule …`: requests kept for later (/api/v1beta1/schedules, docs/schedules.md). */
export function registerScheduleCommands(program: Command): void {
  const schedule = program
    .command('schedule')
    .description('run an action, an update or a delete at a time or on a cron');

  schedule
    .command('create <urn>')
    .description(
      'keep a request for later: --action with --at (once) or --cron, or --expires-at alone (a delete then)',
    )
    .option('--action <action>', "the kind's action, or update, delete or retry")
    .option('--params <json>', 'the action params: a JSON object, or @FILE (JSON or YAML)')
    .option('--configs <json>', 'with --action update: the new configs, a JSON object or @FILE')
    .option('--at <time>', 'run once at this ISO 8601 time (in the future)')
    .option('--cron <expression>', 'run on every tick of five cron fields: "0 2 * * *"')
    .option('--tz <zone>', 'the IANA time zone --cron is read in (default: UTC)')
    .option('--expires-at <time>', 'alone: delete the resource at this ISO 8601 time')
    .action(async (urn: string, options: CreateFlags, command: Command) => {
      const { client, out } = contextOf(command);
      const body = await createBody(options);
      const made = await client.request<Schedule>('POST', `/resources/${segment(urn)}/schedules`, {
        body,
      });
      if (out.format === 'json') out.json(made);
      else out.line(scheduleDetails(made));
    });

  schedule
    .command('list [urn]')
    .description("list schedules, oldest first: one resource's, or every one the token may see")
    .option('--project <project>', 'only this project (not with a URN, which names its project)')
    .option('--limit <n>', 'at most this many (default: all)')
    .action(
      async (
        urn: string | undefined,
        options: { project?: string; limit?: string },
        command: Command,
      ) => {
        const { client, out } = contextOf(command);
        if (urn !== undefined && options.project !== undefined)
          throw new CliError('give a URN or --project, not both', EXIT.usage);
        // Under the resource's own path, a resource that does not exist is a 404, not an empty list.
        const listing = await collectPages<Schedule>(
          client,
          urn === undefined ? '/schedules' : `/resources/${segment(urn)}/schedules`,
          'schedules',
          { project: options.project },
          parseLimit(options.limit),
        );
        if (out.format === 'json')
          out.json({ schedules: listing.items, next_page_token: listing.next_page_token });
        else out.line(scheduleTable(listing.items));
      },
    );

  schedule
    .command('get <id>')
    .description('show one schedule, with its last run')
    .action(async (id: string, _options: object, command: Command) => {
      const { client, out } = contextOf(command);
      const found = await client.request<Schedule>('GET', `/schedules/${segment(id)}`);
      if (out.format === 'json') out.json(found);
      else out.line(scheduleDetails(found));
    });

  schedule
    .command('delete <id>')
    .description('delete a schedule (the operations it already made stay)')
    .action(async (id: string, _options: object, command: Command) => {
      const { client, out } = contextOf(command);
      await client.request('DELETE', `/schedules/${segment(id)}`);
      if (out.format === 'json') out.json({ deleted: id });
      else out.line(`schedule ${id} deleted`);
    });
}

/**
 * The API's create body from the flags, as given: which combinations are allowed (exactly one of
 * --at and --cron, --expires-at alone) is the server's to say, in a 400 that names the field.
 */
async function createBody(options: CreateFlags): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  if (options.action !== undefined) {
    body.request = {
      action: options.action,
      ...(options.params !== undefined
        ? { params: await readObjectOption(options.params, '--params') }
        : {}),
      ...(options.configs !== undefined
        ? { configs: await readObjectOption(options.configs, '--configs') }
        : {}),
    };
  } else if (options.params !== undefined || options.configs !== undefined) {
    throw new CliError('--params and --configs go with --action', EXIT.usage);
  }
  if (options.at !== undefined) body.at = options.at;
  if (options.cron !== undefined) body.cron = options.cron;
  if (options.tz !== undefined) body.timezone = options.tz;
  if (options.expiresAt !== undefined) body.expires_at = options.expiresAt;
  return body;
}
