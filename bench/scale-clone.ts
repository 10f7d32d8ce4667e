import BetterSqlite3 from 'better-sqlite3';

/**
 * Copies the resources of `project` that were made through the API (`made` of them, named
 * without a `-`-suffix) under new names `<name>-<k>` until `total` are stored, in one statement:
 * the made rows are read once into a temporary table, and a recursive CTE numbers the copies.
 * The rows are inserted in URN order, so every index on the URN grows at its end. The earlier
 * clone ran one INSERT … SELECT per copy, each scanning the whole, growing project: 861 s for
 * 1,000,000 rows (docs/benchmarks.md § Scale). Returns the seconds it took.
 */
export function cloneResources(file: string, project: string, made: number, total: number): number {
  const db = new BetterSqlite3(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('cache_size = -262144'); // 256 MiB: the indexes being built stay in memory
    const columns = (db.pragma('table_info(resources)') as Array<{ name: string }>).map(
      (c) => c.name,
    );
    const copied = columns
      .map((c) =>
        c === 'urn'
          ? `made.urn || '-' || copies.k`
          : c === 'name'
            ? `made.name || '-' || copies.k`
            : `made.${c}`,
      )
      .join(', ');
    const started = Date.now();
    db.transaction(() => {
      db.prepare(
        `create temp table made as select * from resources where project = ? and name not like '%-%-%'`,
      ).run(project);
      const found = (db.prepare('select count(*) as n from temp.made').get() as { n: number }).n;
      if (found !== made) throw new Error(`expected ${made} made resources, found ${found}`);
      const copies = Math.ceil(total / made) - 1;
      if (copies > 0)
        db.prepare(
          `insert into resources (${columns.join(', ')})
         with recursive copies(k) as (select 1 union all select k + 1 from copies where k < ?)
         select ${copied} from temp.made as made, copies
         order by made.urn || '-' || copies.k`,
        ).run(copies);
      db.prepare('drop table temp.made').run();
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
    return (Date.now() - started) / 1000;
  } finally {
    db.close();
  }
}
