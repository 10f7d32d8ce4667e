import type { Command } from 'commander';

import type { SpecChange } from '../core/requests/spec-changes.js';
import type { Resource } from './api-documents.js';
import { EXIT } from './cli-error.js';
import { type CliContext, contextOf } from './context.js';
import { segment } from './http-client.js';
import type { Manifest } from './manifest-files.js';
import { documentError, findResource, manifestsInOrder } from './manifest-set.js';
import { changeLines } from './resource-views.js';
import type { Accepted } from './wait.js';

type DiffOutcome = 'create' | 'update' | 'unchanged';

interface ResourceDiff {
  urn: string;
  outcome: DiffOutcome;
  /** What would change (the dry run's `changes`); absent when the server could not be asked. */
  changes?: SpecChange[];
  /** Why there are no `changes`: a dependency in the documents would be created first. */
  note?: string;
}

/**
 * `steward diff -f FILE|DIR|-`: what `apply` would do, from a dry-run PUT of each document. Exits 1
 * when something would change, 0 when nothing would, and 2 when a document is refused (or
 * unreadable), as `kubectl diff` and `diff` itself do.
 */
export function registerDiffCommand(program: Command): void {
  program
    .command('diff')
    .description(
      'show what apply would change for the documents of a file, a directory or stdin; exit 1 when something would',
    )
    .requiredOption(
      '-f, --file <path>',
      'a YAML or JSON file (--- between documents), a directory of them, or - for stdin',
    )
    .action(async (options: { file: string }, command: Command) => {
      const ctx = contextOf(command);
      const diffs: ResourceDiff[] = [];
      const creating = new Set<string>();
      for (const manifest of await manifestsInOrder(ctx, options.file)) {
        const diff = await diffOf(ctx, manifest, creating);
        if (diff.outcome === 'create') creating.add(diff.urn);
        diffs.push(diff);
        if (ctx.out.format === 'table') ctx.out.line(diffText(diff));
      }
      const changed = diffs.some((diff) => diff.outcome !== 'unchanged');
      if (ctx.out.format === 'json') ctx.out.json({ changed, resources: diffs });
      if (changed) process.exitCode = EXIT.failure;
    });
}

/**
 * A dependency that would be created first cannot be named in a dry run (it is not stored yet): such
 * a document is reported as created or updated without its field changes.
 */
async function diffOf(
  ctx: CliContext,
  manifest: Manifest,
  creating: ReadonlySet<string>,
): Promise<ResourceDiff> {
  const { urn } = manifest;
  const waitsFor = manifest.dependsOn.filter((dependency) => creating.has(dependency));
  if (waitsFor.length) {
    const note = `depends on ${waitsFor.join(', ')}, which would be created first`;
    return { urn, outcome: (await findResource(ctx, urn)) ? 'update' : 'create', note };
  }
  let answer: Accepted | Resource;
  try {
    answer = await ctx.client.request<Accepted | Resource>('PUT', `/resources/${segment(urn)}`, {
      body: manifest.body,
      query: { dry_run: 'true' },
    });
  } catch (err) {
    throw documentError(manifest, err, EXIT.usage);
  }
  if (!('operation' in answer)) return { urn, outcome: 'unchanged' };
  const outcome = answer.operation.action === 'update' ? 'update' : 'create';
  return { urn, outcome, changes: answer.changes ?? [] };
}

function diffText(diff: ResourceDiff): string {
  if (diff.outcome === 'unchanged') return `unchanged ${diff.urn}`;
  const head = `${diff.outcome === 'create' ? 'would be created' : 'would be updated'} ${diff.urn}`;
  const details = diff.note ? [diff.note] : changeLines(diff.changes ?? []);
  return [head, ...details.map((line) => `  ${line}`)].join('\n');
}
