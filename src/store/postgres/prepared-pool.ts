import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';

export interface PreparedPoolOptions {
  /** A text with parameters is named from its run of this number on (that run included). @default 8 */
  prepareAfter: number;
  /** At most this many texts are named at once (and prepared on each connection that runs them); others run unnamed. @default 200 */
  maxPrepared: number;
}

/** Names no other statement of Steward's uses (named-query.ts names its own `steward_claim`, …). */
const NAME_PREFIX = 'steward_prepared_';

/**
 * Whether a named statement's call failed for being named (below): the prepared statement is gone
 * (26000), or its cached plan's result type changed (of feature_not_supported, 0A000, only that
 * message). The text then runs unnamed, so a retry succeeds: postgres-driver.ts answers it 503.
 */
export function failedForItsName(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return (
    code === '26000' ||
    (code === '0A000' && /cached plan must not change result type/.test(String(message)))
  );
}

/**
 * The pool kysely's PostgreSQL dialect takes, whose clients keep prepared the statements the store
 * runs over and over. kysely sends every statement unnamed, so the server parses and plans it
 * at every call: for a create one at a time that was about a third of its time
 * (docs/decisions.md, "PostgreSQL: statements kept prepared, …"). A text with parameters gets a name at its
 * `prepareAfter`th run (one per text, for the process); node-postgres then parses it
 * once per connection and only binds it after, as the claim's and the write-back's named statements
 * (named-query.ts) always were, and as postgres.js does for every statement. PostgreSQL plans the
 * first five runs of a prepared statement for their values and then keeps a generic plan only if
 * it is no costlier (`plan_cache_mode = auto`). The names are bounded: texts with IN-lists of many
 * lengths would otherwise grow every connection's prepared statements without end.
 *
 * A named statement can fail for being named: prepared before a newer Steward's migration changed
 * a table it reads with `*` ("cached plan must not change result type", SQLSTATE 0A000), or gone
 * from the server's session (26000: a connection pooler that does not keep prepared statements,
 * or node-postgres closing one whose values it could not send). That call fails (inside a
 * transaction nothing can be run again anyway; the driver answers it 503, postgres-driver.ts), and
 * the text is never named again, so a retry runs it unnamed.
 */
export function preparedPool(
  pool: pg.Pool,
  { prepareAfter = 8, maxPrepared = 200 }: Partial<PreparedPoolOptions> = {},
): PostgresPool {
  const seen = new Map<string, number>();
  const names = new Map<string, string>();
  const unnameable = new Set<string>();
  let named = 0;
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>();

  function nameOf(text: string): string | undefined {
    const name = names.get(text);
    if (name !== undefined || unnameable.has(text) || names.size >= maxPrepared) return name;
    const count = (seen.get(text) ?? 0) + 1;
    if (count < prepareAfter) {
      // Counted up to a bound too: a flood of one-off texts must not grow this map.
      if (seen.has(text) || seen.size < 10 * maxPrepared) seen.set(text, count);
      return undefined;
    }
    seen.delete(text);
    // Never a name used before: a connection that prepared it keeps it for the old text.
    named += 1;
    const fresh = `${NAME_PREFIX}${named}`;
    names.set(text, fresh);
    return fresh;
  }

  async function run(client: pg.PoolClient, text: string, values: readonly unknown[]) {
    const name = values.length > 0 ? nameOf(text) : undefined;
    if (name === undefined) return client.query(text, [...values]);
    try {
      return await client.query({ name, text, values: [...values] });
    } catch (err) {
      if (failedForItsName(err)) {
        names.delete(text);
        unnameable.add(text);
      }
      throw err;
    }
  }

  function wrap(client: pg.PoolClient): PostgresPoolClient {
    let wrapped = clients.get(client);
    if (!wrapped) {
      wrapped = {
        query: ((text: string, values: readonly unknown[]) =>
          run(client, text, values)) as unknown as PostgresPoolClient['query'],
        release: () => client.release(),
      };
      clients.set(client, wrapped);
    }
    return wrapped;
  }

  return {
    connect: async () => wrap(await pool.connect()),
    end: () => pool.end(),
  };
}
