/** The exit codes of the client commands (docs/cli.md lists them). */
export const EXIT = Object.freeze({
  ok: 0,
  /** The server refused the request, or the awaited work ended in ERROR. */
  failure: 1,
  /** Bad arguments or an unreadable input file: nothing was sent. */
  usage: 2,
  /** Steward did not answer (connection refused, DNS, reset). */
  unreachable: 3,
  /** --wait gave up at --timeout; the work goes on. */
  timeout: 4,
});

/** A failure the CLI reports as `steward: <message>` and exits with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failure,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
