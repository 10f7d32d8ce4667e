import type { Command } from 'commander';

import type { Resource, Revision } from './api-documents.js';
import { CliError, EXIT } from './cli-error.js';
import { contextOf } from './context.js';
import { segment } from './http-client.js';
import { collect, collectPages, parseLimit } from './pages.js';
import { resourceDetails, resourceTable, revisionTable } from './resource-views.js';

/** `steward resource get|describe|list|revisions`: the reads of /api/v1beta1/resources (resource-commands.ts has the changes). */
export function registerResourceReads(resource: Command): void {
  resource
    .command('get <urn>')
    .description('show one resource')
    .action(async (urn: string, _options: object, command: Command) => {
      const ctx = contextOf(command);
      const found = await ctx.client.request<Resource>('GET', `/resources/${segment(urn)}`);
      if (ctx.out.format === 'json') ctx.out.json(found);
      else ctx.out.line(resourceDetails(found));
    });

  resource
    .command('describe <urn>')
    .description('show one resource with its drift, pause and policy, and its latest revisions')
    .action(async (urn: string, _options: object, command: Command) => {
      const ctx = contextOf(command);
      const found = await ctx.client.request<Resource>('GET', `/resources/${segment(urn)}`);
      const revisions = await ctx.client.request<{ revisions: Revision[] }>(
        'GET',
        `/resources/${segment(urn)}/revisions`,
        { query: { page_size: '5' } },
      );
      if (ctx.out.format === 'json') ctx.out.json({ resource: found, ...revisions });
      else ctx.out.line(`${resourceDetails(found)}\n${revisionTable(revisions.revisions)}`);
    });

  resource
    .command('list')
    .description('list resources, ordered by URN')
    .option('--project <project>', 'only this project')
    .option('--kind <kind>', 'only this kind')
    .option('--status <status>', 'only PENDING, COMPLETED or ERROR')
    .option('--paused', 'only paused resources')
    .option(
      '--label <key=value>',
      'only resources with this label (repeatable; all must match)',
      collect,
      [],
    )
    .option('--limit <n>', 'at most this many (default: all)')
    .action(
      async (
        options: {
          project?: string;
          kind?: string;
          status?: string;
          paused?: boolean;
          label: string[];
          limit?: string;
        },
        command: Command,
      ) => {
        const ctx = contextOf(command);
        for (const pair of options.label)
          if (pair.indexOf('=') <= 0)
            throw new CliError(`--label takes key=value, not "${pair}"`, EXIT.usage);
        const query = {
          project: options.project,
          kind: options.kind,
          status: options.status,
          paused: options.paused ? 'true' : undefined,
          labels: options.label.length ? options.label.join(',') : undefined,
        };
        const listing = await collectPages<Resource>(
          ctx.client,
          '/resources',
          'resources',
          query,
          parseLimit(options.limit),
        );
        if (ctx.out.format === 'json')
          ctx.out.json({ resources: listing.items, next_page_token: listing.next_page_token });
        else ctx.out.line(resourceTable(listing.items));
      },
    );

  resource
    .command('revisions <urn>')
    .description('the history of spec and labels, newest first')
    .option('--limit <n>', 'at most this many (default: all)')
    .action(async (urn: string, options: { limit?: string }, command: Command) => {
      const ctx = contextOf(command);
      const listing = await collectPages<Revision>(
        ctx.client,
        `/resources/${segment(urn)}/revisions`,
        'revisions',
        {},
        parseLimit(options.limit),
      );
      if (ctx.out.format === 'json')
        ctx.out.json({ revisions: listing.items, next_page_token: listing.next_page_token });
      else ctx.out.line(revisionTable(listing.items));
    });
}
