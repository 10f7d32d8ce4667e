import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Kysely } from 'kysely';

import type { StoreDriver } from '../../src/store/driver.js';
import { compileHot, compileInsert, hotStatementCheck } from '../../src/store/hot-statements.js';
import { openPostgres } from '../../src/store/postgres/postgres-driver.js';
import type { Database } from '../../src/store/schema.js';
import { openSqlite } from '../../src/store/sqlite/sqlite-driver.js';
import { describeEachDialect, storeDialect } from '../helpers/dialects.js';
import { type FakeSteward, startFakeSteward, urnOf } from '../helpers/fake-steward.js';
import { call } from '../helpers/harness.js';
import { testDatabase } from '../helpers/test-database.js';

/**
 * Hot statements (src/store/hot-statements.ts): a statement compiled once per shape and run
 * again with other values must be the statement kysely compiles for those values, on each
 * dialect; a parameter list that does not match kysely's costs a compile, never a wrong statement.
 */
describeEachDialect('hot statements', () => {
  describe('compileHot', () => {
    let dir: string;
    let driver: StoreDriver;
    let db: Kysely<Database>;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'steward-hot-'));
      const url = await testDatabase(dir);
      driver =
        storeDialect() === 'sqlite'
          ? openSqlite({ file: url, busyTimeoutMs: 1000 })
          : openPostgres({ url, poolSize: 1 });
      db = driver.db;
    });
    afterAll(async () => {
      await driver.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const find = (urn: string, status: string) =>
      db.selectFrom('resources').selectAll().where('urn', '=', urn).where('status', '=', status);
    const plainly = (query: { sql: string; parameters: readonly unknown[] }) => ({
      sql: query.sql,
      parameters: [...query.parameters],
    });

    it('runs the first compile with new values: the SQL and parameters of a fresh compile, compiled once', () => {
      let compiles = 0;
      const hot = (urn: string, status: string) =>
        compileHot(db, 'test: find by urn and status', [urn, status], () => {
          compiles += 1;
          return find(urn, status).compile();
        });
      expect(plainly(hot('u-1', 'PENDING'))).toEqual(plainly(find('u-1', 'PENDING').compile()));
      expect(plainly(hot('u-2', 'ERROR'))).toEqual(plainly(find('u-2', 'ERROR').compile()));
      expect(plainly(hot('u-3', 'COMPLETED'))).toEqual(plainly(find('u-3', 'COMPLETED').compile()));
      expect(compiles).toBe(1);
    });

    it('parameters listed in another order than kysely binds them: every call compiles, none misplaces a value', () => {
      let compiles = 0;
      const hot = (urn: string, status: string) =>
        compileHot(db, 'test: find, parameters swapped', [status, urn], () => {
          compiles += 1;
          return find(urn, status).compile();
        });
      hot('u-1', 'PENDING');
      expect(plainly(hot('u-2', 'ERROR'))).toEqual(plainly(find('u-2', 'ERROR').compile()));
      expect(compiles).toBe(2);
    });

    it('an undefined or object parameter, or a count of parameters unlike the first, compiles', () => {
      let compiles = 0;
      const hot = (values: unknown[]) =>
        compileHot(db, 'test: odd parameters', values, () => {
          compiles += 1;
          return find('u', 's').compile();
        });
      hot(['u', 's']);
      hot(['u', undefined]);
      hot(['u', { toOperationNode: () => null }]);
      hot(['u', 's', 'more']);
      expect(compiles).toBe(4);
    });

    it('inserts: a shape per set of columns, so a row without a column is not run as one with it', () => {
      const insert = (row: Record<string, unknown>) =>
        compileInsert(db, 'test: insert labels', [row], () =>
          db
            .insertInto('resource_labels')
            .values(row as { urn: string; key: string; value: string })
            .compile(),
        );
      const full = { urn: 'u-1', key: 'team', value: 'ops' };
      const fresh = (row: Record<string, unknown>) =>
        db
          .insertInto('resource_labels')
          .values(row as { urn: string; key: string; value: string })
          .compile();
      insert(full);
      const other = { urn: 'u-2', key: 'tier', value: 'web' };
      expect(plainly(insert(other))).toEqual(plainly(fresh(other)));
      const without = { urn: 'u-3', key: 'tier', value: undefined };
      expect(plainly(insert(without))).toEqual(plainly(fresh(without)));
      expect(insert(without).sql).not.toEqual(insert(other).sql);
    });
  });

  describe('on the paths of a create and its sync', () => {
    let s: FakeSteward;
    beforeAll(() => {
      hotStatementCheck.enabled = true;
    });
    afterAll(() => {
      hotStatementCheck.enabled = false;
    });
    beforeEach(async () => {
      hotStatementCheck.reused.clear();
      hotStatementCheck.mismatched.clear();
      s = await startFakeSteward({
        config: { revisionRetention: 2, webhookAllow: ['127.0.0.1/32'] },
        kinds: [{ kind: 'fake_app', dependencies: { db: { kind: 'fake' } } }],
      });
    });
    afterEach(() => s.close());

    it('every reuse equals a fresh compile, and every listed parameter list matched kysely’s', async () => {
      for (const name of ['db-1', 'db-2', 'db-3'])
        expect((await s.create(name, {}, { labels: { team: name } })).status).toBe(202);
      await s.drain();
      for (const name of ['app-1', 'app-2'])
        expect(
          (await s.create(name, {}, { kind: 'fake_app', dependencies: { db: urnOf('db-1') } }))
            .status,
        ).toBe(202);
      // Three changes, each after the last completed: the revisions past two are pruned.
      for (const round of [1, 2, 3]) {
        const patched = await call('PATCH', `${s.api}/resources/${urnOf('db-2')}`, {
          labels: { team: `t-${round}`, tier: 'web' },
        });
        expect(patched.status).toBe(202);
        await s.drain();
      }
      expect((await call('DELETE', `${s.api}/resources/${urnOf('db-3')}`)).status).toBe(202);
      await s.drain();
      for (const urn of [urnOf('db-1'), urnOf('db-2'), urnOf('app-2', 'fake_app')])
        expect((await s.get(urn)).body.state.status).toBe('COMPLETED');
      expect((await s.get(urnOf('db-2'))).body.labels).toEqual({ team: 't-3', tier: 'web' });
      expect((await s.get(urnOf('db-3'))).status).toBe(404);

      expect([...hotStatementCheck.mismatched]).toEqual([]);
      const reused = [...hotStatementCheck.reused].map((shape) => shape.replace(/\(.*$/, ''));
      for (const name of [
        'find resource',
        'insert resources unless taken',
        'insert operations',
        'insert revisions',
        'delete resource_labels',
        'insert resource_labels',
        'count footprint',
        'quota totals',
        'prune revisions',
      ])
        expect(reused).toContain(name);
      // PostgreSQL claims, writes back and appends events (with their webhook deliveries) in statements of its own (postgres/).
      if (storeDialect() === 'sqlite')
        for (const name of [
          'enabled webhooks',
          'insert events',
          'due rows',
          'claim resources',
          'start operations',
          'write back',
          'finish operation',
        ])
          expect(reused).toContain(name);
    });

    it('so does each list page of resources, whatever its filters and scope', async () => {
      for (const [name, project, team] of [
        ['l-1', 'p', 'a'],
        ['l-2', 'p', 'b'],
        ['l-3', 'q', 'a'],
      ] as const)
        expect((await s.create(name, {}, { project, labels: { team } })).status).toBe(202);
      await s.drain();
      const listed = async (query: string): Promise<string[]> => {
        const urns: string[] = [];
        let token: string | null = null;
        do {
          const next: string = token === null ? '' : `&page_token=${encodeURIComponent(token)}`;
          const res = await call('GET', `${s.api}/resources?page_size=1&${query}${next}`);
          expect(res.status).toBe(200);
          urns.push(...(res.body.resources as Array<{ urn: string }>).map((r) => r.urn));
          token = res.body.next_page_token as string | null;
        } while (token !== null);
        return urns;
      };
      const [l1, l2, l3] = [urnOf('l-1'), urnOf('l-2'), urnOf('l-3', 'fake', 'q')];
      // Twice each: the second round reuses what the first compiled.
      for (let round = 0; round < 2; round += 1) {
        expect(await listed('')).toEqual([l1, l2, l3]);
        expect(await listed('project=p')).toEqual([l1, l2]);
        expect(await listed('kind=fake&status=COMPLETED&paused=false')).toEqual([l1, l2, l3]);
        expect(await listed('paused=true')).toEqual([]);
        expect(await listed('labels=team=a')).toEqual([l1, l3]);
        expect(await listed('project=q&labels=team=a')).toEqual([l3]);
        expect(await listed('labels=team=b')).toEqual([l2]);
        // A caller held to some projects: the scope is a list the query binds.
        const { queries } = s.h.steward;
        for (const scope of [['q'], ['p', 'q'], []]) {
          const page = await queries.listResources({}, 50, undefined, scope);
          expect(page.items.map((r) => r.urn)).toEqual(
            [l1, l2, l3].filter((urn) => scope.includes(urn.split(':')[3]!)),
          );
        }
      }
      expect([...hotStatementCheck.mismatched]).toEqual([]);
      const reused = [...hotStatementCheck.reused];
      for (const shape of [
        'list resource items inline()',
        'list resource items inline(after)',
        'list resource items inline(project,after)',
        'list resource items inline(kind,status,paused)',
        'list resource items inline(paused)',
        'list resource items inline(labels×1)',
        'list resource items inline(project,labels×1)',
        'list resource items inline(labels×1,after)',
        'list resource items inline(projects×1)',
        'list resource items inline(projects×2)',
      ])
        expect(reused).toContain(shape);
    });

    it('so does each of a batch of schedule firings, and an event insert while a webhook takes events', async () => {
      const names = ['s-1', 's-2', 's-3'];
      for (const name of names) expect((await s.create(name)).status).toBe(202);
      await s.drain();
      // Deliveries go nowhere (nothing listens on port 9): only the outbox rows matter here.
      const webhook = await call('POST', `${s.api}/webhooks`, {
        url: 'http://127.0.0.1:9/hook',
        events: ['*'],
        secret: 'whsec-hot-statements-check',
      });
      expect(webhook.status).toBe(201);
      // Two rounds, so that each statement of a round is reused in the next. Due a little ahead (a
      // schedule's `at` must be in the future when made), fired once it passed.
      for (const round of [1, 2]) {
        const at = new Date(Date.now() + 1500).toISOString();
        for (const name of names)
          expect(
            (
              await call('POST', `${s.api}/resources/${urnOf(name)}/schedules`, {
                // Configs as they are: a change of nothing, an action the batch commits.
                request: { action: 'update', configs: {} },
                at,
              })
            ).status,
          ).toBe(201);
        await new Promise((resolve) => setTimeout(resolve, Date.parse(at) - Date.now() + 50));
        expect(await s.h.steward.scheduler.runOnce()).toBe(names.length);
        await s.drain();
        for (const name of names) {
          const operations = await s.operations(urnOf(name));
          expect(operations[0]).toMatchObject({ action: 'update', status: 'succeeded' });
          // One made by a schedule in each round so far.
          const fired = operations.filter((op) => String(op.created_by).startsWith('schedule:'));
          expect(fired).toHaveLength(round);
        }
      }

      expect([...hotStatementCheck.mismatched]).toEqual([]);
      const reused = [...hotStatementCheck.reused].map((shape) => shape.replace(/\(.*$/, ''));
      for (const name of [
        'find resources',
        'claim schedules: due ids',
        'claim schedules: lease',
        'accept-batch:insert operations',
        'accept-batch:schedule-run',
      ])
        expect(reused).toContain(name);
      if (storeDialect() === 'sqlite') expect(reused).toContain('insert events returning id');
    });
  });
});
