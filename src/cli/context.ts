import type { Command } from 'commander';

import { type ApiClient, createApiClient, DEFAULT_URL } from './http-client.js';
import { createPrinter, parseOutputFormat, type Printer } from './output.js';

/** What every client command works with, from the global options and the environment. */
export interface CliContext {
  client: ApiClient;
  out: Printer;
}

export interface GlobalOptions {
  url?: string;
  output: string;
}

/** --url, else STEWARD_URL, else http://127.0.0.1:8080; the token in STEWARD_TOKEN; --output table|json. */
export function contextOf(command: Command, env: NodeJS.ProcessEnv = process.env): CliContext {
  const options = command.optsWithGlobals<GlobalOptions>();
  return {
    client: createApiClient(
      options.url ?? (env.STEWARD_URL || DEFAULT_URL),
      env.STEWARD_TOKEN || undefined,
    ),
    out: printerOf(command),
  };
}

/** The printer the global `-o` option asks for (commands that need no API client). */
export function printerOf(command: Command): Printer {
  return createPrinter(parseOutputFormat(command.optsWithGlobals<GlobalOptions>().output));
}
