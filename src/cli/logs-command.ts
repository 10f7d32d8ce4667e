import type { Command } from 'commander';

import type { LogChunk } from './api-documents.js';
import { CliError, EXIT } from './cli-error.js';
import { contextOf } from './context.js';
import { segment } from './http-client.js';
import { readLines } from './lines.js';

/** `steward resource logs URN [-f]`: GET /resources/{urn}/logs, one NDJSON line a chunk. */
export function registerLogsCommand(resource: Command): void {
  resource
    .command('logs <urn>')
    .description("print the resource's logs (kinds that have logs)")
    .option('-f, --follow', 'keep printing new lines until interrupted')
    .option('--tail <n>', 'start with the last n lines')
    .option('--timestamps', 'prefix each line with its time and stream')
    .action(
      async (
        urn: string,
        options: { follow?: boolean; tail?: string; timestamps?: boolean },
        command: Command,
      ) => {
        const { client, out } = contextOf(command);
        if (options.tail !== undefined && !/^\d{1,6}$/.test(options.tail))
          throw new CliError('--tail must be a whole number from 0 to 999999', EXIT.usage);
        const res = await client.stream(`/resources/${segment(urn)}/logs`, {
          query: { follow: options.follow ? 'true' : undefined, tail: options.tail },
        });
        for await (const line of readLines(res.body!)) {
          if (line.trim() === '') continue;
          const chunk = JSON.parse(line) as LogChunk & { error?: { message?: string } };
          // After the headers are out, the server reports a failure as a last line.
          if (chunk.error)
            throw new CliError(
              `the log stream failed: ${chunk.error.message ?? 'no reason given'}`,
              EXIT.failure,
            );
          if (out.format === 'json') out.jsonLine(chunk);
          else
            out.line(
              options.timestamps ? `${chunk.ts} ${chunk.stream ?? '-'} ${chunk.line}` : chunk.line,
            );
        }
      },
    );
}
