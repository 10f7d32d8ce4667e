import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Config } from '../../src/config.js';
import { createStore } from '../../src/store/create-store.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { call, type Harness, startSteward, waitFor } from '../helpers/harness.js';
import { killAllWith, processesWith } from '../helpers/local-processes.js';
import { openRawDatabase, type RawDatabase } from '../helpers/raw-database.js';

/**
 * Quotas (issue 11): one request could start 256 programs, and creates could fill the disk.
 * Every refusal is a 403 quota_exceeded naming the quota, with every table as it was.
 * Programs carry MARK in their arguments, so what runs is found in /proc without trusting Steward.
 */
const MARK = `86400.${process.pid}${Date.now() % 100000}`;
const TABLES = [
  'resources',
  'resource_labels',
  'resource_dependencies',
  'revisions',
  'operations',
  'events',
  'quota_usage',
];

const urn = (kind: string, project: string, name: string) =>
  `orn:steward:${kind}:${project}:${name}`;
const sleeper = (project: string, name: string, replicas: number) => ({
  kind: 'process',
  project,
  name,
  spec: { configs: { command: 'sleep', args: [MARK], replicas } },
});
const file = (project: string, name: string, bytes = 10) => ({
  kind: 'file',
  project,
  name,
  spec: { configs: { path: `${project}-${name}.txt`, content: 'x'.repeat(bytes) } },
});

describeEachDialect('quotas', () => {
  let dir: string;
  let h: Harness | undefined;
  let raw: RawDatabase | undefined;

  async function start(config: Partial<Config>): Promise<Harness> {
    // The worker is stepped by hand (settle), so nothing writes between a refusal's two snapshots.
    h = await startSteward({
      dir,
      config: { worker: false, allowedCommands: ['sleep'], runDir: join(dir, 'run'), ...config },
    });
    raw = await openRawDatabase(h.steward.config.db);
    return h;
  }

  async function snapshot(): Promise<unknown[]> {
    const tables = (await raw!.tables()).filter((table) => TABLES.includes(table));
    expect(tables).toHaveLength(TABLES.length);
    const rows: unknown[] = [];
    for (const table of tables) rows.push(await raw!.query(`select * from ${table} order by 1, 2`));
    return rows;
  }

  /** Sends a request that must be refused by `setting`, and shows the database unchanged. */
  async function refused(method: string, url: string, body: unknown, setting: string) {
    const before = await snapshot();
    const res = await call(method, url, body);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('quota_exceeded');
    expect(res.body.error.details.setting).toBe(setting);
    expect(res.body.error.message).toContain(setting);
    expect(await snapshot()).toEqual(before);
    return res.body.error;
  }

  /** Steps the worker until the resource has `status` (or is gone). */
  async function settle(target: string, status: 'COMPLETED' | 'GONE') {
    await waitFor(async () => {
      await h!.steward.engine.drain();
      const res = await call('GET', `${h!.api}/resources/${target}`);
      return status === 'GONE' ? res.status === 404 : res.body?.state?.status === status;
    }, `${target} to be ${status}`);
  }

  /** quota_usage holds, per project, exactly the sums over its resource rows. */
  async function expectCountsMatchRows() {
    const sums = await raw!.query(
      'select project, count(*) as resources, sum(spec_bytes) as bytes, sum(processes) as processes from resources group by project order by project',
    );
    const counted = await raw!.query(
      'select project, resources, bytes, processes from quota_usage where resources > 0 order by project',
    );
    const numbers = (rows: Array<Record<string, unknown>>) =>
      rows.map((r) => ({
        project: r.project,
        resources: Number(r.resources),
        bytes: Number(r.bytes),
        processes: Number(r.processes),
      }));
    expect(numbers(counted)).toEqual(numbers(sums));
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-quotas-'));
  });
  afterEach(async () => {
    await raw?.close();
    await h?.close();
    raw = undefined;
    h = undefined;
    const left = killAllWith(MARK);
    rmSync(dir, { recursive: true, force: true });
    expect(left).toEqual([]);
  });

  it('refuses one create of a process with 256 replicas under the default quotas: 403, nothing stored, nothing started', async () => {
    const { api } = await start({});
    const error = await refused(
      'POST',
      `${api}/resources`,
      sleeper('web', 'flood', 256),
      'STEWARD_QUOTA_PROJECT_PROCESSES',
    );
    expect(error.details).toEqual({
      quota: 'processes',
      scope: 'project',
      project: 'web',
      setting: 'STEWARD_QUOTA_PROJECT_PROCESSES',
      max: 64,
      used: 0,
      requested: 256,
    });
    expect(error.message).toBe(
      'project web would go past its quota of 64 processes (STEWARD_QUOTA_PROJECT_PROCESSES): 0 in use, this request adds 256',
    );
    expect((await call('GET', `${api}/resources/${urn('process', 'web', 'flood')}`)).status).toBe(
      404,
    );
    // The worker finds nothing to start.
    expect(await h!.steward.engine.runOnce()).toBe(0);
    expect(processesWith(MARK)).toEqual([]);
    // The quota itself is allowed: 64 replicas are accepted (not started: the worker is off).
    expect((await call('POST', `${api}/resources`, sleeper('web', 'full', 64))).status).toBe(202);
    await expectCountsMatchRows();
  });

  it('counts replicas across scale, stop, start and projects; a delete frees them once the resource is gone', async () => {
    const { api } = await start({ quotaProjectProcesses: 3, quotaProcesses: 4 });
    expect((await call('POST', `${api}/resources`, sleeper('a', 'web', 2))).status).toBe(202);
    await settle(urn('process', 'a', 'web'), 'COMPLETED');

    // scale past the project's quota: refused, the resource and its replicas as they were.
    const scale = await refused(
      'POST',
      `${api}/resources/${urn('process', 'a', 'web')}/actions/scale`,
      { replicas: 4 },
      'STEWARD_QUOTA_PROJECT_PROCESSES',
    );
    expect(scale.details).toMatchObject({ scope: 'project', max: 3, used: 2, requested: 2 });
    expect(
      (
        await call('POST', `${api}/resources/${urn('process', 'a', 'web')}/actions/scale`, {
          replicas: 3,
        })
      ).status,
    ).toBe(202);
    await settle(urn('process', 'a', 'web'), 'COMPLETED');

    // Another project fits its own quota but not the global one (3 + 2 > 4).
    const global = await refused(
      'POST',
      `${api}/resources`,
      sleeper('b', 'web', 2),
      'STEWARD_QUOTA_PROCESSES',
    );
    expect(global.details).toEqual({
      quota: 'processes',
      scope: 'global',
      setting: 'STEWARD_QUOTA_PROCESSES',
      max: 4,
      used: 3,
      requested: 2,
    });
    expect((await call('POST', `${api}/resources`, sleeper('b', 'web', 1))).status).toBe(202);
    await settle(urn('process', 'b', 'web'), 'COMPLETED');
    expect(processesWith(MARK)).toHaveLength(4);

    // A stopped process counts nothing; starting it again is checked like a scale.
    expect(
      (await call('POST', `${api}/resources/${urn('process', 'a', 'web')}/actions/stop`)).status,
    ).toBe(202);
    await settle(urn('process', 'a', 'web'), 'COMPLETED');
    expect((await call('POST', `${api}/resources`, sleeper('b', 'api', 2))).status).toBe(202);
    await settle(urn('process', 'b', 'api'), 'COMPLETED');
    await refused(
      'POST',
      `${api}/resources/${urn('process', 'a', 'web')}/actions/start`,
      undefined,
      'STEWARD_QUOTA_PROCESSES',
    );

    // A delete is never refused, and frees the quota when the resource is gone.
    expect((await call('DELETE', `${api}/resources/${urn('process', 'b', 'api')}`)).status).toBe(
      202,
    );
    await settle(urn('process', 'b', 'api'), 'GONE');
    expect(
      (await call('POST', `${api}/resources/${urn('process', 'a', 'web')}/actions/start`)).status,
    ).toBe(202);
    await settle(urn('process', 'a', 'web'), 'COMPLETED');
    expect(processesWith(MARK)).toHaveLength(4);
    await expectCountsMatchRows();

    for (const name of [urn('process', 'a', 'web'), urn('process', 'b', 'web')])
      expect((await call('DELETE', `${api}/resources/${name}`)).status).toBe(202);
    await settle(urn('process', 'a', 'web'), 'GONE');
    await settle(urn('process', 'b', 'web'), 'GONE');
    expect(processesWith(MARK)).toEqual([]);
    expect(
      await raw!.query(
        'select project, resources, bytes, processes from quota_usage where resources > 0',
      ),
    ).toEqual([]);
  });

  it('refuses resources past the per-project and the global count, and a delete frees its place', async () => {
    const { api } = await start({ quotaProjectResources: 2, quotaResources: 3 });
    for (const name of ['a', 'b'])
      expect((await call('POST', `${api}/resources`, file('one', name))).status).toBe(202);
    const project = await refused(
      'POST',
      `${api}/resources`,
      file('one', 'c'),
      'STEWARD_QUOTA_PROJECT_RESOURCES',
    );
    expect(project.details).toEqual({
      quota: 'resources',
      scope: 'project',
      project: 'one',
      setting: 'STEWARD_QUOTA_PROJECT_RESOURCES',
      max: 2,
      used: 2,
      requested: 1,
    });
    expect((await call('POST', `${api}/resources`, file('two', 'a'))).status).toBe(202);
    const global = await refused(
      'POST',
      `${api}/resources`,
      file('two', 'b'),
      'STEWARD_QUOTA_RESOURCES',
    );
    expect(global.details).toMatchObject({
      quota: 'resources',
      scope: 'global',
      max: 3,
      used: 3,
      requested: 1,
    });
    expect((await call('GET', `${api}/resources/${urn('file', 'two', 'b')}`)).status).toBe(404);

    await settle(urn('file', 'one', 'a'), 'COMPLETED');
    expect((await call('DELETE', `${api}/resources/${urn('file', 'one', 'a')}`)).status).toBe(202);
    // Still counted while the delete runs (the row is there until the backend is torn down).
    await refused('POST', `${api}/resources`, file('two', 'b'), 'STEWARD_QUOTA_RESOURCES');
    await settle(urn('file', 'one', 'a'), 'GONE');
    expect((await call('POST', `${api}/resources`, file('two', 'b'))).status).toBe(202);
    await expectCountsMatchRows();
  });

  it('holds a project quota exactly under concurrent creates (on PostgreSQL too: the project row is locked until commit)', async () => {
    const { api } = await start({ quotaProjectResources: 5 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call('POST', `${api}/resources`, file('race', `r${i}`))),
    );
    expect(answers.filter((res) => res.status === 202)).toHaveLength(5);
    expect(
      answers.filter((res) => res.status === 403 && res.body.error.code === 'quota_exceeded'),
    ).toHaveLength(15);
    expect(await raw!.query("select count(*) as n from resources where project = 'race'")).toEqual([
      { n: raw!.dialect === 'postgres' ? '5' : 5 },
    ]);
    await expectCountsMatchRows();
  });

  it('refuses stored bytes past the per-project and the global quota, on create and on PATCH', async () => {
    const { api } = await start({ quotaProjectBytes: 300_000, quotaBytes: 500_000 });
    expect((await call('POST', `${api}/resources`, file('one', 'a', 200_000))).status).toBe(202);
    const project = await refused(
      'POST',
      `${api}/resources`,
      file('one', 'b', 200_000),
      'STEWARD_QUOTA_PROJECT_BYTES',
    );
    expect(project.details).toMatchObject({ quota: 'bytes', scope: 'project', max: 300_000 });
    expect(project.details.used + project.details.requested).toBeGreaterThan(300_000);
    expect((await call('POST', `${api}/resources`, file('two', 'a', 200_000))).status).toBe(202);
    const global = await refused(
      'POST',
      `${api}/resources`,
      file('three', 'a', 200_000),
      'STEWARD_QUOTA_BYTES',
    );
    expect(global.details).toMatchObject({ quota: 'bytes', scope: 'global', max: 500_000 });

    // A PATCH counts what it adds: growing within the quota passes, past it is refused, shrinking always passes.
    const a = urn('file', 'one', 'a');
    await settle(a, 'COMPLETED');
    expect(
      (
        await call('PATCH', `${api}/resources/${a}`, {
          configs: { path: 'one-a.txt', content: 'x'.repeat(250_000) },
        })
      ).status,
    ).toBe(202);
    await settle(a, 'COMPLETED');
    await refused(
      'PATCH',
      `${api}/resources/${a}`,
      { configs: { path: 'one-a.txt', content: 'x'.repeat(400_000) } },
      'STEWARD_QUOTA_PROJECT_BYTES',
    );
    expect((await call('GET', `${api}/resources/${a}`)).body.version).toBe(2);
    expect(
      (
        await call('PATCH', `${api}/resources/${a}`, {
          configs: { path: 'one-a.txt', content: 'small' },
        })
      ).status,
    ).toBe(202);
    await expectCountsMatchRows();
  });

  it('counts what an import fills in against the bytes quota: the row and its project grow, the next growing accept is refused', async () => {
    const { api } = await start({ quotaProjectBytes: 300_000 });
    // A file Steward did not make, in the project's directory of the file root.
    mkdirSync(join(dir, 'files', 'imp'), { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, 'files', 'imp', 'big.txt'), 'x'.repeat(200_000));
    const accepted = await call('POST', `${api}/resources`, {
      kind: 'file',
      project: 'imp',
      name: 'big',
      import: true,
      spec: { configs: { path: 'big.txt' } },
    });
    expect(accepted.status).toBe(202);
    await settle(urn('file', 'imp', 'big'), 'COMPLETED');
    const [row] = await raw!.query(
      "select spec_bytes, configs from resources where project = 'imp'",
    );
    // The row counts the content observe filled in, as an accept of those configs would have.
    expect(JSON.parse(String(row!.configs)).content).toHaveLength(200_000);
    expect(Number(row!.spec_bytes)).toBe(
      Buffer.byteLength(String(row!.configs)) + Buffer.byteLength('{}') * 2,
    );
    await expectCountsMatchRows();
    await refused(
      'POST',
      `${api}/resources`,
      file('imp', 'more', 150_000),
      'STEWARD_QUOTA_PROJECT_BYTES',
    );
    // Its delete gives the whole footprint back.
    expect((await call('DELETE', `${api}/resources/${urn('file', 'imp', 'big')}`)).status).toBe(
      202,
    );
    await settle(urn('file', 'imp', 'big'), 'GONE');
    expect(await raw!.query("select bytes from quota_usage where project = 'imp'")).toEqual([
      { bytes: raw!.dialect === 'postgres' ? '0' : 0 },
    ]);
  });

  it('keeps the newest STEWARD_REVISION_RETENTION revisions of a resource, and pages through them', async () => {
    const { api } = await start({ revisionRetention: 3 });
    const a = urn('file', 'one', 'a');
    expect((await call('POST', `${api}/resources`, file('one', 'a'))).status).toBe(202);
    expect((await call('POST', `${api}/resources`, file('one', 'b'))).status).toBe(202);
    for (let i = 1; i <= 5; i += 1) {
      await settle(a, 'COMPLETED');
      expect(
        (await call('PATCH', `${api}/resources/${a}`, { labels: { n: String(i) } })).status,
      ).toBe(202);
    }
    const first = await call('GET', `${api}/resources/${a}/revisions?page_size=2`);
    expect(first.body.revisions.map((r: { version: number }) => r.version)).toEqual([6, 5]);
    const second = await call(
      'GET',
      `${api}/resources/${a}/revisions?page_size=2&page_token=${first.body.next_page_token}`,
    );
    expect(second.body.revisions.map((r: { version: number }) => r.version)).toEqual([4]);
    expect(second.body.next_page_token).toBeNull();
    // Only this resource's history was pruned.
    const stored = await raw!.query('select urn, version from revisions order by id');
    expect(stored).toEqual([
      { urn: urn('file', 'one', 'b'), version: 1 },
      { urn: a, version: 4 },
      { urn: a, version: 5 },
      { urn: a, version: 6 },
    ]);
  });

  it('0004_quotas counts the resources of an existing database as the accept path does', async () => {
    const { api } = await start({});
    const bodies = [
      {
        ...file('one', 'a'),
        labels: { team: 'é' },
        spec: { configs: { path: 'a.txt', content: 'naïve ✓' } },
      },
      sleeper('one', 'web', 3),
      {
        ...sleeper('one', 'idle', 5),
        spec: { configs: { command: 'sleep', args: [MARK], replicas: 5, stopped: true } },
      },
      {
        kind: 'job',
        project: 'two',
        name: 'once',
        spec: { configs: { command: 'sleep', args: [MARK] } },
      },
    ];
    for (const body of bodies)
      expect((await call('POST', `${api}/resources`, body)).status).toBe(202);
    const counted = await raw!.query(
      'select project, resources, bytes, processes from quota_usage order by project',
    );
    const footprints = await raw!.query(
      'select urn, spec_bytes, processes from resources order by urn',
    );
    expect(counted.map((row) => [row.project, Number(row.processes)])).toEqual([
      ['one', 3],
      ['two', 1],
    ]);
    const { db } = h!.steward.config;
    await raw!.close();
    await h!.close();
    h = undefined;

    // The database as it was before 0004.
    raw = await openRawDatabase(db);
    await raw.run('drop table quota_usage');
    await raw.run('alter table resources drop column spec_bytes');
    await raw.run('alter table resources drop column processes');
    await raw.run("delete from kysely_migration where name = '0004_quotas'");
    // ...and before the migrations after it, which kysely runs in order after 0004 again.
    await raw.run('drop index resources_project_due');
    await raw.run('drop index events_project_id');
    for (const column of ['policy', 'paused', 'drift', 'deadline_at'])
      await raw.run(`alter table resources drop column ${column}`);
    await raw.run('drop table schedules');
    await raw.run('drop table audit_log');
    await raw.run('drop table idempotency_keys');
    for (const table of ['webhook_attempts', 'webhook_deliveries', 'webhooks'])
      await raw.run(`drop table ${table}`);
    await raw.run("delete from kysely_migration where name > '0004_quotas'");
    const store = await createStore({ db, busyTimeoutMs: 1000 });
    await store.close();
    expect(
      await raw.query(
        'select project, resources, bytes, processes from quota_usage order by project',
      ),
    ).toEqual(counted);
    expect(
      await raw.query('select urn, spec_bytes, processes from resources order by urn'),
    ).toEqual(footprints);
  });
});
