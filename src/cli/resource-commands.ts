import type { Command } from 'commander';

import { dryRunQuery, ifMatchHeader, mutatingOptions, reportAccepted } from './accepted.js';
import type { Operation, Resource } from './api-documents.js';
import { CliError, EXIT } from './cli-error.js';
import { contextOf } from './context.js';
import { segment } from './http-client.js';
import { parseJsonObject, readDocument } from './input.js';
import { registerLogsCommand } from './logs-command.js';
import { registerResourceReads } from './resource-read-commands.js';
import { acceptedLine } from './resource-views.js';
import { type Accepted, waitOptionsOf } from './wait.js';

/** A cascading delete's answer: the dependents' deletes, leaves first, then the resource's own. */
interface CascadeAccepted extends Accepted {
  cascade?: Accepted[];
}

interface MutatingFlags {
  dryRun?: boolean;
  ifMatch?: string;
  wait?: boolean;
  timeout?: string;
}

/** `steward resource …`: a client for /api/v1beta1/resources. */
export function registerResourceCommands(program: Command): void {
  const resource = program
    .command('resource')
    .description('create, inspect, change and delete resources');

  mutatingOptions(
    resource
      .command('create')
      .description('create a resource from a JSON or YAML document (nested or flat form)')
      .requiredOption('-f, --file <file>', 'the document; - reads stdin')
      .option(
        '--import',
        'adopt a backend object that already exists instead of making one (changes nothing on the backend)',
      )
      .option(
        '--expires-at <time>',
        'delete the resource at this ISO time (a delete schedule made with it; the document may say expires_at instead)',
      ),
    { ifMatch: false },
  ).action(
    async (
      options: MutatingFlags & { file: string; import?: boolean; expiresAt?: string },
      command: Command,
    ) => {
      const ctx = contextOf(command);
      const wait = waitOptionsOf(options);
      const body = await readDocument(options.file);
      if (options.import) body.import = true;
      if (options.expiresAt !== undefined) body.expires_at = options.expiresAt;
      const accepted = await ctx.client.request<Accepted>('POST', '/resources', {
        body,
        query: dryRunQuery(options.dryRun),
      });
      await reportAccepted(ctx, accepted, wait);
    },
  );

  registerResourceReads(resource);

  mutatingOptions(
    resource
      .command('update <urn>')
      .description(
        'change configs, dependencies or labels (each part given replaces the stored one)',
      )
      .requiredOption('-f, --file <file>', 'the PATCH body, nested or flat; - reads stdin'),
  ).action(async (urn: string, options: MutatingFlags & { file: string }, command: Command) => {
    const ctx = contextOf(command);
    const wait = waitOptionsOf(options);
    const body = withoutIdentity(await readDocument(options.file), urn);
    const accepted = await ctx.client.request<Accepted>('PATCH', `/resources/${segment(urn)}`, {
      body,
      query: dryRunQuery(options.dryRun),
      headers: ifMatchHeader(options.ifMatch),
    });
    await reportAccepted(ctx, accepted, wait);
  });

  mutatingOptions(
    resource
      .command('execute <urn> <action>')
      .description("run one of the kind's actions (steward module get KIND lists them)")
      .option('--params <json>', 'the action params, a JSON object', '{}'),
  ).action(
    async (
      urn: string,
      action: string,
      options: MutatingFlags & { params: string },
      command: Command,
    ) => {
      const ctx = contextOf(command);
      const wait = waitOptionsOf(options);
      const body = { action, params: parseJsonObject(options.params, '--params') };
      const accepted = await ctx.client.request<Accepted>(
        'POST',
        `/resources/${segment(urn)}/execute`,
        { body, query: dryRunQuery(options.dryRun), headers: ifMatchHeader(options.ifMatch) },
      );
      await reportAccepted(ctx, accepted, wait);
    },
  );

  mutatingOptions(
    resource
      .command('delete <urn>')
      .description('tear the resource down and remove it')
      .option('--orphan', 'remove the record only; the backend object stays as it is')
      .option(
        '--cascade',
        'delete every resource that depends on it first, leaves first (--dry-run shows the order)',
      ),
  ).action(
    async (
      urn: string,
      options: MutatingFlags & { orphan?: boolean; cascade?: boolean },
      command: Command,
    ) => {
      const ctx = contextOf(command);
      const wait = waitOptionsOf(options);
      const accepted = await ctx.client.request<CascadeAccepted>(
        'DELETE',
        `/resources/${segment(urn)}`,
        {
          query: {
            ...dryRunQuery(options.dryRun),
            orphan: options.orphan ? 'true' : undefined,
            cascade: options.cascade ? 'true' : undefined,
          },
          headers: ifMatchHeader(options.ifMatch),
        },
      );
      if (accepted.cascade?.length && ctx.out.format === 'table')
        for (const dependent of accepted.cascade) ctx.out.line(acceptedLine(dependent));
      await reportAccepted(ctx, accepted, wait);
    },
  );

  mutatingOptions(
    resource
      .command('refresh <urn>')
      .description(
        'read the backend and record how it differs from the spec (state.drift); changes nothing',
      ),
    { dryRun: false, ifMatch: false },
  ).action(async (urn: string, options: MutatingFlags, command: Command) => {
    const ctx = contextOf(command);
    const accepted = await ctx.client.request<Accepted>(
      'POST',
      `/resources/${segment(urn)}/refresh`,
    );
    await reportAccepted(ctx, accepted, waitOptionsOf(options));
  });

  for (const [name, description] of [
    ['pause', 'stop syncing the resource; requests are still accepted and wait'],
    ['resume', 'sync the resource again, starting with what waited'],
  ] as const)
    resource
      .command(`${name} <urn>`)
      .description(description)
      .action(async (urn: string, _options: object, command: Command) => {
        const ctx = contextOf(command);
        const answer = await ctx.client.request<{ resource: Resource; operation?: Operation }>(
          'POST',
          `/resources/${segment(urn)}/${name}`,
        );
        if (ctx.out.format === 'json') ctx.out.json(answer);
        else
          ctx.out.line(
            answer.operation
              ? `${urn}: ${name === 'pause' ? 'paused' : 'resumed'} (operation ${answer.operation.id})`
              : `${urn}: already ${name === 'pause' ? 'paused' : 'running'}; nothing changed`,
          );
      });

  mutatingOptions(
    resource.command('retry <urn>').description('retry the failed action of a resource in ERROR'),
    { dryRun: false },
  ).action(async (urn: string, options: MutatingFlags, command: Command) => {
    const ctx = contextOf(command);
    const wait = waitOptionsOf(options);
    const accepted = await ctx.client.request<Accepted>(
      'POST',
      `/resources/${segment(urn)}/retry`,
      { headers: ifMatchHeader(options.ifMatch) },
    );
    await reportAccepted(ctx, accepted, wait);
  });

  registerLogsCommand(resource);
}

/**
 * Lets the file that created a resource update it: `kind`, `project`/`parent`,
 * `name` and `urn` are dropped when they match the URN (the PATCH body has no
 * identity), and refused when they name another resource.
 */
export function withoutIdentity(
  document: Record<string, unknown>,
  urn: string,
): Record<string, unknown> {
  const [, , kind, project, name] = urn.split(':');
  const expected: Record<string, string | undefined> = {
    kind,
    project,
    parent: project,
    name,
    urn,
  };
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(document)) {
    if (!Object.hasOwn(expected, key)) body[key] = value;
    else if (value !== expected[key])
      throw new CliError(
        `the file's ${key} "${String(value)}" does not match ${urn}; a resource's identity cannot change`,
        EXIT.usage,
      );
  }
  return body;
}
