import { statSync } from 'node:fs';

import type { CoreLogger } from '../../core/logging.js';
import type { ProjectScope } from '../../core/requests/scope.js';
import type { Role } from './caller.js';
import { readTokensFile, type TokenEntry } from './tokens-file.js';

/** One token as authentication compares it: its hash as bytes, its grant resolved. */
export interface KnownToken {
  name: string;
  role: Role;
  scope: ProjectScope;
  digest: Buffer;
}

export interface TokenSource {
  /**
   * The tokens in force; looks at the file again when a second has passed since it last did. A
   * change is always a new array (authenticate.ts remembers what it found for as long as the
   * array is the same), and neither the array nor a token in it is changed in place: both frozen.
   */
  current(): readonly KnownToken[];
}

/** How often, at most, the file's mtime is looked at (rotation without a restart). */
const RELOAD_CHECK_MS = 1000;

/**
 * The tokens file, read once now (an unreadable or invalid file throws: start-up
 * stops with the message) and again whenever it changes. A change is seen by
 * its stamp (mtime, size, inode: `steward token` replaces the file by rename),
 * looked at on a request at most once a second, so there is no timer to stop.
 * An invalid file on reload keeps the tokens in force and logs an error.
 */
export function createTokenSource({
  file,
  logger,
  now,
}: {
  file: string;
  logger: CoreLogger;
  now: () => number;
}): TokenSource {
  const log = logger.child({ component: 'auth' });
  let stamp = stampOf(file);
  let tokens = resolve(readTokensFile(file));
  let checkedAt = now();
  let reported: string | undefined;

  function reload(): void {
    let next: string;
    try {
      next = stampOf(file);
    } catch (err) {
      report((err as Error).message);
      return;
    }
    if (next === stamp) return;
    try {
      tokens = resolve(readTokensFile(file));
      stamp = next;
      reported = undefined;
      log.info('tokens file reloaded', { file, tokens: tokens.length });
    } catch (err) {
      report((err as Error).message);
    }
  }

  /** Once per problem, not once a second. */
  function report(problem: string): void {
    if (problem === reported) return;
    reported = problem;
    log.error('tokens file not reloaded; the previous tokens stay in force', {
      file,
      error: problem,
    });
  }

  return {
    current() {
      const at = now();
      if (at - checkedAt >= RELOAD_CHECK_MS || at < checkedAt) {
        checkedAt = at;
        reload();
      }
      return tokens;
    },
  };
}

function stampOf(file: string): string {
  try {
    const stat = statSync(file);
    return `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
  } catch (err) {
    throw new Error(
      `STEWARD_TOKENS_FILE ${file} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}

function resolve(entries: readonly TokenEntry[]): readonly KnownToken[] {
  return Object.freeze(
    entries.map((entry) =>
      Object.freeze({
        name: entry.name,
        role: entry.role,
        scope: entry.projects.includes('*') ? '*' : Object.freeze([...entry.projects]),
        digest: Buffer.from(entry.sha256, 'hex'),
      }),
    ),
  );
}
