import type BetterSqlite3 from 'better-sqlite3';

export interface OtherWritersOptions {
  /** How often to look while no other connection has committed lately. @default 250 */
  quietMs?: number;
  /** How often to look once one has. @default 20 */
  busyMs?: number;
  /** How long after the last commit seen the looks stay `busyMs` apart. @default 10000 */
  busyForMs?: number;
}

/**
 * Calls `onCommit` when another connection has committed to the file: another Steward process on
 * it (`steward serve --no-worker` beside `steward worker`), or a `steward` command. SQLite tells no
 * one, so this looks: `PRAGMA data_version` changes for a connection only when a different
 * connection committed (this connection's own commits, and the checkpointer's PASSIVE and RESTART
 * checkpoints, leave it as it was), and reading it takes no write lock (while nothing changed, it
 * reads the WAL index in shared memory). A process alone on its file never sees it change and looks
 * four times a second; once another writer shows, it looks every 20 ms until 10 s after that
 * writer's last commit, so work accepted by an API process is claimed by a worker process within
 * about 20 ms rather than at its next poll (docs/decisions.md).
 * Returns the function that stops looking.
 */
export function watchOtherWriters(
  sqlite: BetterSqlite3.Database,
  onCommit: () => void,
  { quietMs = 250, busyMs = 20, busyForMs = 10_000 }: OtherWritersOptions = {},
): () => void {
  const dataVersion = sqlite.prepare<[], number>('pragma data_version').pluck();
  let seen = dataVersion.get();
  let lastCommitAt = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const look = () => {
    if (stopped || !sqlite.open) return;
    let changed = false;
    try {
      const version = dataVersion.get();
      changed = version !== seen;
      seen = version;
    } catch {
      // Not readable just now (the file is being closed): the next look tries again.
    }
    if (changed) lastCommitAt = Date.now();
    next();
    // Outside the catch, and after the next look is set: a listener's error is not swallowed,
    // and does not stop the looks.
    if (changed) onCommit();
  };
  const next = () => {
    timer = setTimeout(look, Date.now() - lastCommitAt < busyForMs ? busyMs : quietMs);
    timer.unref();
  };
  next();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
