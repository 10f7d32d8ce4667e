import { openRawDatabase } from './raw-database.js';

/**
 * Holds a sync's write-back out of the database: a trigger on `resources` that refuses the
 * update which first writes `text` into `column` (say `"written"` into `data`). The module's
 * backend write has happened and its result is never stored: the window a kill -9 between the
 * two leaves, made certain rather than raced. `lift()` drops the trigger.
 *
 * A refused write-back is what the engine calls `write_failed`: it keeps the lease and, once
 * it lapses, runs the step again; the trigger refuses that one too, until `lift()`.
 */
export async function fenceWriteBack(
  db: string,
  column: 'data' | 'output',
  text: string,
): Promise<{ lift(): Promise<void> }> {
  const raw = await openRawDatabase(db);
  const like = `%${text}%`;
  if (raw.dialect === 'sqlite') {
    await raw.run(
      `create trigger test_fence before update on resources
       when new.${column} like '${like}' and old.${column} not like '${like}'
       begin select raise(abort, 'test: write-back fenced'); end`,
    );
  } else {
    await raw.run(
      `create function test_fence() returns trigger language plpgsql as $$
       begin
         if new.${column} like '${like}' and old.${column} not like '${like}' then
           raise exception 'test: write-back fenced';
         end if;
         return new;
       end $$`,
    );
    await raw.run(
      'create trigger test_fence before update on resources for each row execute function test_fence()',
    );
  }
  return {
    async lift() {
      await raw.run(
        'drop trigger test_fence' + (raw.dialect === 'postgres' ? ' on resources' : ''),
      );
      if (raw.dialect === 'postgres') await raw.run('drop function test_fence()');
      await raw.close();
    },
  };
}
