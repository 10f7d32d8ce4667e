import type { Command } from 'commander';

import type { Operation, Resource } from './api-documents.js';
import { CliError, EXIT } from './cli-error.js';
import { type CliContext, contextOf } from './context.js';
import { segment } from './http-client.js';
import type { Manifest } from './manifest-files.js';
import { documentError, manifestsInOrder } from './manifest-set.js';
import { type Accepted, waitForOperation, type WaitOptions, waitOptionsOf } from './wait.js';

export type ApplyOutcome = 'created' | 'updated' | 'unchanged';

/** What a PUT did to one document's resource. */
export interface AppliedResource {
  urn: string;
  outcome: ApplyOutcome;
  resource: Resource;
  /** The accepted operation (none when unchanged). */
  operation?: Operation;
}

/** `steward apply -f FILE|DIR|-`: PUT each document, dependencies first (docs/cli.md). */
export function registerApplyCommand(program: Command): void {
  program
    .command('apply')
    .description(
      'create or update resources to exactly the documents of a file, a directory or stdin, dependencies first',
    )
    .requiredOption(
      '-f, --file <path>',
      'a YAML or JSON file (--- between documents), a directory of them, or - for stdin',
    )
    .option('--wait', 'then wait until every applied resource is COMPLETED; exit 1 if one is not')
    .option('--timeout <seconds>', 'with --wait: give up after this long in all (exit 4)')
    .action(
      async (options: { file: string; wait?: boolean; timeout?: string }, command: Command) => {
        const ctx = contextOf(command);
        const wait = waitOptionsOf(options);
        const manifests = await manifestsInOrder(ctx, options.file);
        const results: AppliedResource[] = [];
        for (const manifest of manifests) {
          const result = await put(ctx, manifest);
          results.push(result);
          if (ctx.out.format === 'table') ctx.out.line(`${result.outcome} ${result.urn}`);
        }
        const failures = wait ? await waitForAll(ctx, results, wait) : [];
        if (ctx.out.format === 'json') ctx.out.json({ resources: results });
        if (failures.length)
          throw new CliError(
            `${failures.length} of ${results.length} did not complete: ${failures.join('; ')}`,
            EXIT.failure,
          );
      },
    );
}

/** PUT one document: 202 created or updated (the operation's action says which), 200 unchanged. */
async function put(ctx: CliContext, manifest: Manifest): Promise<AppliedResource> {
  let answer: Accepted | Resource;
  try {
    answer = await ctx.client.request<Accepted | Resource>(
      'PUT',
      `/resources/${segment(manifest.urn)}`,
      { body: manifest.body },
    );
  } catch (err) {
    throw documentError(manifest, err);
  }
  if (!('operation' in answer))
    return { urn: manifest.urn, outcome: 'unchanged', resource: answer };
  const outcome = answer.operation.action === 'update' ? 'updated' : 'created';
  return { urn: manifest.urn, outcome, resource: answer.resource, operation: answer.operation };
}

/**
 * Follows each applied resource to the end of its work: the accepted operation, or for an unchanged
 * one still PENDING, the operation it is running. Each result then holds the final resource and
 * operation; returns what did not end COMPLETED. --timeout bounds the whole wait.
 */
async function waitForAll(
  ctx: CliContext,
  results: AppliedResource[],
  wait: WaitOptions,
): Promise<string[]> {
  const deadline = wait.timeoutMs === undefined ? undefined : Date.now() + wait.timeoutMs;
  const failures: string[] = [];
  for (const result of results) {
    let operation = result.operation;
    if (!operation && result.resource.state.status === 'PENDING')
      operation = await ctx.client.request<Operation>(
        'GET',
        `/operations/${segment(result.resource.state.operation_id)}`,
      );
    if (operation) {
      const timeoutMs = deadline === undefined ? undefined : Math.max(1, deadline - Date.now());
      const final = await waitForOperation(
        ctx,
        { resource: result.resource, operation },
        { ...wait, timeoutMs },
      );
      result.operation = final.operation;
      if (final.resource) result.resource = final.resource;
    }
    if (result.resource.state.status !== 'COMPLETED')
      failures.push(
        `${result.urn} is ${result.resource.state.status}${result.resource.state.sync.last_error ? ` (${result.resource.state.sync.last_error})` : ''}`,
      );
  }
  return failures;
}
