/**
 * Thrown by `plan` to reject a request. The API answers 400 `invalid_request`
 * with the message.
 *
 * @example
 * if (path.includes('..')) throw new ValidationError('path must stay inside the root', { path });
 */
export class ValidationError extends Error {
  /** How Steward recognises it, also from a copy of this class (`error.name`). */
  override readonly name = 'ValidationError';
  /**
   * @param message - the API's error message: say what is wrong and how to fix it
   * @param details - returned as the error's `details`; never put a secret in either
   */
  constructor(
    message: string,
    /** Returned as the API error's `details`. */
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
  /** How Steward recognises it, also from a copy of this class (`error.name`). */
  override readonly name = 'TerminalError';
  /**
   * @param message - becomes `state.sync.last_error`; never put a secret in it
   * @param options - `cause`: the underlying error, as the standard `Error.cause`
   */
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * True for a `TerminalError`, also one made by another copy of the SDK (a module that bundles
 * its own): such an error is not `instanceof` this class, so its name decides. An error whose
 * name cannot even be read is not terminal (it is retried).
 *
 * @example
 * catch (err) { if (isTerminalError(err)) throw err; ctx.log.warn('retrying', { error: String(err) }); }
 */
export function isTerminalError(error: unknown): boolean {
  try {
    return error instanceof TerminalError || (error as Error | undefined)?.name === 'TerminalError';
  } catch {
    return false;
  }
}
