/**
 * Thrown by `plan` to reject a request. The API answers 400 `invalid_request`
 * with the message.
 *
 * @example
 * if (path.includes('..')) throw new ValidationError('path must stay inside the root', { path });
 */
export class ValidationError extends Error {
  override readonly name = 'ValidationError';
  constructor(
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/**
 * Thrown by `sync` when retrying cannot help (bad credentials, a refused request).
 * The resource goes to ERROR at once with the message as `last_error`.
 *
 * @example
 * if (res.status === 401) throw new TerminalError('the server refused the credentials');
 */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * True for a `TerminalError`, also one made by another copy of the SDK (a module that bundles
 * its own): such an error is not `instanceof` this class, so its name decides. An error whose
 * name cannot even be read is not terminal (it is retried).
 */
export function isTerminalError(error: unknown): boolean {
  try {
    return error instanceof TerminalError || (error as Error | undefined)?.name === 'TerminalError';
  } catch {
    return false;
  }
}
