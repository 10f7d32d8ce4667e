import { readFile } from 'node:fs/promises';

import type { Command } from 'commander';

import type { Webhook, WebhookDelivery } from './api-documents.js';
import { CliError, EXIT } from './cli-error.js';
import { contextOf } from './context.js';
import { segment } from './http-client.js';
import { readAll } from './input.js';
import { collect, collectPages, parseLimit } from './pages.js';
import { deliveryDetails, deliveryTable, webhookDetails, webhookTable } from './webhook-views.js';

interface CreateFlags {
  event: string[];
  project?: string;
  secretFile?: string;
}

/** `steward webhook …`: events POSTed to a URL, signed (/api/v1beta1/webhooks, docs/webhooks.md). */
export function registerWebhookCommands(program: Command): void {
  const webhook = program
    .command('webhook')
    .description('send events to a URL as they happen, signed with a secret (admins only)');

  // The receiver's URL is an argument: `--url` is the global option that names the Steward.
  webhook
    .command('create <url>')
    .description('make a webhook: the events of --event sent to URL, signed with --secret-file')
    .option('--event <type>', 'an event type (resource.created, …) or "*"; repeat it', collect, [])
    .option('--project <project>', "only this project's events (default: every project's)")
    .option(
      '--secret-file <path>',
      'the signing secret, 16 to 512 characters, from this file (- for stdin); never shown again',
    )
    .action(async (url: string, options: CreateFlags, command: Command) => {
      const { client, out } = contextOf(command);
      const body = await createBody(url, options);
      const made = await client.request<Webhook>('POST', '/webhooks', { body });
      if (out.format === 'json') out.json(made);
      else out.line(webhookDetails(made));
    });

  webhook
    .command('list')
    .description('list the webhooks the token may see, oldest first')
    .option('--limit <n>', 'at most this many (default: all)')
    .action(async (options: { limit?: string }, command: Command) => {
      const { client, out } = contextOf(command);
      const listing = await collectPages<Webhook>(
        client,
        '/webhooks',
        'webhooks',
        {},
        parseLimit(options.limit),
      );
      if (out.format === 'json')
        out.json({ webhooks: listing.items, next_page_token: listing.next_page_token });
      else out.line(webhookTable(listing.items));
    });

  webhook
    .command('get <id>')
    .description('show one webhook, and whether it is disabled and why')
    .action(async (id: string, _options: object, command: Command) => {
      const { client, out } = contextOf(command);
      const found = await client.request<Webhook>('GET', `/webhooks/${segment(id)}`);
      if (out.format === 'json') out.json(found);
      else out.line(webhookDetails(found));
    });

  webhook
    .command('delete <id>')
    .description('delete a webhook and its deliveries; nothing more is sent')
    .action(async (id: string, _options: object, command: Command) => {
      const { client, out } = contextOf(command);
      await client.request('DELETE', `/webhooks/${segment(id)}`);
      if (out.format === 'json') out.json({ deleted: id });
      else out.line(`webhook ${id} deleted`);
    });

  webhook
    .command('deliveries <id>')
    .description("list a webhook's deliveries, newest event first, with the last answer of each")
    .option('--limit <n>', 'at most this many (default: all)')
    .action(async (id: string, options: { limit?: string }, command: Command) => {
      const { client, out } = contextOf(command);
      const listing = await collectPages<WebhookDelivery>(
        client,
        `/webhooks/${segment(id)}/deliveries`,
        'deliveries',
        {},
        parseLimit(options.limit),
      );
      if (out.format === 'json')
        out.json({ deliveries: listing.items, next_page_token: listing.next_page_token });
      else out.line(deliveryTable(listing.items));
    });

  webhook
    .command('redeliver <id> <delivery_id>')
    .description(
      "send a delivery's event again as a new delivery, due now (re-enables the webhook)",
    )
    .action(async (id: string, deliveryId: string, _options: object, command: Command) => {
      const { client, out } = contextOf(command);
      const delivery = await client.request<WebhookDelivery>(
        'POST',
        `/webhooks/${segment(id)}/deliveries/${segment(deliveryId)}/redeliver`,
      );
      if (out.format === 'json') out.json(delivery);
      else out.line(deliveryDetails(delivery));
    });
}

/**
 * The API's create body from the flags, as given: a missing --event or --secret-file, an unknown
 * event type or a refused URL is the server's to say, in a 400 that names the field.
 */
async function createBody(url: string, options: CreateFlags): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = { url };
  if (options.event.length > 0) body.events = options.event;
  if (options.project !== undefined) body.project = options.project;
  if (options.secretFile !== undefined) body.secret = await readSecret(options.secretFile);
  return body;
}

/**
 * The secret from a file or stdin, never from an option's value (shell history, `ps`), as
 * STEWARD_TOKEN is read. One final line break is dropped: `echo … > file` writes one.
 */
async function readSecret(file: string): Promise<string> {
  let text: string;
  try {
    text = file === '-' ? await readAll(process.stdin) : await readFile(file, 'utf8');
  } catch (err) {
    throw new CliError(
      `cannot read ${file === '-' ? 'stdin' : file}: ${(err as Error).message}`,
      EXIT.usage,
    );
  }
  return text.replace(/\r?\n$/, '');
}
