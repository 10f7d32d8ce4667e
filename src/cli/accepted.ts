import type { Command } from 'commander';

import type { CliContext } from './context.js';
import { acceptedLine } from './resource-views.js';
import { type Accepted, assertSucceeded, waitForOperation, type WaitOptions } from './wait.js';

/** The options every mutating command takes. */
export function mutatingOptions(command: Command, { dryRun = true, ifMatch = true } = {}): Command {
  if (dryRun) command.option('--dry-run', 'run every check and the plan, store nothing');
  if (ifMatch)
    command.option(
      '--if-match <version>',
      'apply only if the resource is at this version (else 412)',
    );
  return command
    .option(
      '--wait',
      'wait until the work is COMPLETED or ERROR, showing progress on stderr; exit 1 on ERROR',
    )
    .option('--timeout <seconds>', 'with --wait: give up after this long (exit 4)');
}

/**
 * Prints an accepted write; with --wait, follows it to the end and fails
 * (exit 1) unless the operation succeeded. JSON output is the API's answer,
 * or with --wait the final `{resource, operation}` (resource null once deleted).
 */
export async function reportAccepted(
  ctx: CliContext,
  accepted: Accepted,
  wait: WaitOptions | undefined,
): Promise<void> {
  const { out } = ctx;
  if (!wait || accepted.dry_run) {
    if (out.format === 'json') out.json(accepted);
    else out.line(acceptedLine(accepted));
    return;
  }
  if (out.format === 'table') out.note(acceptedLine(accepted));
  const final = await waitForOperation(ctx, accepted, wait);
  if (out.format === 'json') out.json({ resource: final.resource, operation: final.operation });
  else if (final.resource === null) out.line(`${accepted.resource.urn}: deleted`);
  else
    out.line(
      `${final.resource.urn}: ${final.resource.state.status} at version ${final.resource.version}`,
    );
  assertSucceeded(final.operation);
}

/** `--if-match 3` → `If-Match: "3"`. */
export function ifMatchHeader(value: string | undefined): Record<string, string> {
  return value === undefined ? {} : { 'if-match': /^\d+$/.test(value) ? `"${value}"` : value };
}

export function dryRunQuery(dryRun: boolean | undefined): Record<string, string | undefined> {
  return { dry_run: dryRun ? 'true' : undefined };
}
