import { TerminalError } from '../../sdk/index.js';
import type { UnreadableReason } from './secret-box.js';

/**
 * A resource's sealed values that no configured key opens, as sealed-resources.ts finds them, and
 * what a sync is told about them: their fields and key ids, never their values.
 */

/** A sealed value that did not open: where it is and why (never the value). */
export interface UnreadableSecret {
  /** Its JSON pointer in the resource document: `/spec/configs/password`, `/state/output/token`. */
  pointer: string;
  reason: UnreadableReason;
  keyId: string | undefined;
  /** "secret /spec/configs/password of orn:…: it is sealed with key 3f9a1c2e, which …" */
  message: string;
  /** The value as stored: put back unchanged when the resource is written again. */
  sealed: string;
}

/**
 * For a module's sync: a TerminalError that names each value that does not open (its field
 * and key id, never the value), so the resource goes to ERROR with a readable last_error.
 */
export function requireReadable(unreadable: readonly UnreadableSecret[]): void {
  if (unreadable.length) throw new TerminalError(describeUnreadable(unreadable));
}

/** One readable sentence for last_error: each value's field and key, and what to do. */
export function describeUnreadable(unreadable: readonly UnreadableSecret[]): string {
  const remedy =
    'configure the key that sealed it (STEWARD_SECRET_KEY or STEWARD_SECRET_KEYS_PREVIOUS) and retry; a secret config can also be set again with a PATCH';
  return `cannot open the secrets the module needs: ${unreadable.map((u) => u.message).join('; ')}; ${remedy}`;
}
