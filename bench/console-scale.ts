/**
 * The console at scale (docs/benchmarks.md "Console"): with `total` resources stored, how long a
 * fresh browser takes from navigation to the first resources table, and how long a status change
 * takes from the request that makes it to the open page showing it. Not part of `npm run bench`
 * (it needs Chromium): `npm run -s build && node dist/bench/console-scale.js [total]`.
 */
import { loadavg } from 'node:os';

import BetterSqlite3 from 'better-sqlite3';
import { chromium, type Page } from 'playwright-core';

import { startBenchSteward } from './instance.js';
import { describeMachine } from './machine.js';
import { NOOP_ACTION, noopCreateBody, noopUrn } from './noop-module.js';
import { percentile, sleep } from './stats.js';

const TOTAL = Number(process.argv[2] ?? 100_000);
const PROJECTS = 100;
const LOADS = 7;
const CHANGES = 20;
const CHROMIUM = process.env.STEWARD_BENCH_CHROMIUM ?? '/usr/bin/chromium';

/** Runs in the page before its own scripts: when the table first has a row, and each row's status as it changes. */
const OBSERVER = `
  window.__marks = [];
  const seen = new Map();
  new MutationObserver(() => {
    if (window.__firstTable === undefined && document.querySelector('table.resources tbody tr'))
      window.__firstTable = performance.now();
    for (const row of document.querySelectorAll('tr[data-urn]')) {
      const text = row.querySelector('.badge')?.textContent ?? '';
      if (seen.get(row.dataset.urn) === text) continue;
      seen.set(row.dataset.urn, text);
      window.__marks.push({ urn: row.dataset.urn, text, at: performance.timeOrigin + performance.now() });
    }
  }).observe(document, { subtree: true, childList: true, characterData: true });
`;

async function main(): Promise<void> {
  // Worker off: a status change stays where the request put it (PENDING), so the page has something to show.
  const bench = await startBenchSteward({ worker: false });
  const base = bench.api.replace(/\/api\/v1beta1$/, '');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox'],
  });
  try {
    const started = Date.now();
    await cloneResources(bench.api, bench.steward.config.db, TOTAL);
    const storeMs = Date.now() - started;
    const views = ['#/resources', `#/resources?project=p-42`, '#/resources?labels=team%3Dops'];
    const firstTable: Record<string, number[]> = {};
    /** The first GET /resources of each load, as the page timed it: Steward's share of the wait. */
    const listRequest: Record<string, number[]> = {};
    for (const view of views) {
      firstTable[view] = [];
      listRequest[view] = [];
      for (let i = 0; i < LOADS; i += 1) {
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.addInitScript(OBSERVER);
        await page.goto(`${base}/ui/${view}`);
        firstTable[view].push(
          await poll(
            () => page.evaluate('window.__firstTable') as Promise<number | undefined>,
            view,
          ),
        );
        listRequest[view].push(
          (await page.evaluate(
            `(() => { const e = performance.getEntriesByType('resource').find((r) => r.name.includes('/api/v1beta1/resources?')); return e.responseEnd - e.startTime; })()`,
          )) as number,
        );
        await context.close();
      }
    }
    const changes = await statusChanges(browser.newPage.bind(browser), base, bench.api);
    const machine = describeMachine();
    const summary = (ms: number[]) =>
      `p50 ${percentile(ms, 50).toFixed(0)} ms, max ${Math.max(...ms).toFixed(0)} ms (${ms.length} loads)`;
    console.log(
      JSON.stringify({ total: TOTAL, storeMs, firstTable, listRequest, changes, machine }, null, 1),
    );
    console.log(
      `load average at the end: ${loadavg()
        .map((n) => n.toFixed(1))
        .join(', ')}`,
    );
    console.log(`\n${TOTAL} resources stored in ${(storeMs / 1000).toFixed(1)} s`);
    for (const view of views) {
      console.log(`first table, ${view}: ${summary(firstTable[view]!)}`);
      console.log(`  its GET /resources: ${summary(listRequest[view]!)}`);
    }
    console.log(`status change → open page: ${summary(changes)}`);
  } finally {
    await browser.close();
    await bench.close();
  }
}

/**
 * Two resources made through the API (so their rows are exactly what Steward writes), then
 * `total` copies of the first cloned in SQL on a second connection: every column as is but the
 * names, spread over PROJECTS projects, one in ten labelled team=ops.
 */
async function cloneResources(api: string, db: string, total: number): Promise<void> {
  const seed = noopUrn('seed', 'seed');
  const res = await fetch(`${api}/resources`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...noopCreateBody('seed', 'seed'), labels: { team: 'web' } }),
  });
  if (res.status !== 202) throw new Error(`seed create answered ${res.status}`);
  const sqlite = new BetterSqlite3(db);
  try {
    const columns = (table: string) =>
      (sqlite.prepare(`pragma table_info(${table})`).all() as Array<{ name: string }>).map(
        (column) => column.name,
      );
    const name = `'r-' || printf('%06d', n.i)`;
    const project = `'p-' || printf('%02d', n.i % ${PROJECTS})`;
    const urn = `'orn:steward:noop:' || ${project} || ':' || ${name}`;
    const opId = `'op_clone' || printf('%014d', n.i)`;
    const replaced: Record<string, Record<string, string>> = {
      resources: { urn, name, project, operation_id: opId },
      operations: { id: opId, urn },
      resource_labels: { urn },
    };
    const where: Record<string, string> = {
      resources: `t.urn = '${seed}'`,
      operations: `t.urn = '${seed}'`,
      resource_labels: `t.urn = '${seed}'`,
    };
    sqlite.transaction(() => {
      // The seed as a sync would leave it (the worker is off): COMPLETED, its operation succeeded.
      sqlite
        .prepare(
          `update resources set status = 'COMPLETED', data = '{}', observed_version = version,
             next_sync_at = null, last_synced_at = updated_at where urn = ?`,
        )
        .run(seed);
      sqlite
        .prepare(
          `update operations set status = 'succeeded', attempts = 1, started_at = created_at,
             finished_at = created_at where urn = ?`,
        )
        .run(seed);
      for (const table of Object.keys(replaced)) {
        const names = columns(table).filter((column) => column !== 'rowid');
        const values = names.map((column) => replaced[table]![column] ?? `t.${column}`);
        sqlite
          .prepare(
            `with recursive n(i) as (select 0 union all select i + 1 from n where i < ${total - 1})
             insert into ${table} (${names.join(', ')}) select ${values.join(', ')} from ${table} t, n where ${where[table]}`,
          )
          .run();
      }
      sqlite.prepare(`update resources set labels = '{"team":"ops"}' where name like 'r-%0'`).run();
      sqlite
        .prepare(
          `update resource_labels set value = 'ops' where urn like 'orn:steward:noop:p-%:r-%0'`,
        )
        .run();
    })();
  } finally {
    sqlite.close();
  }
}

/** CHANGES times: run the no-op action on a listed resource, and time it until its row shows PENDING. */
async function statusChanges(
  newPage: () => Promise<Page>,
  base: string,
  api: string,
): Promise<number[]> {
  const page = await newPage();
  await page.addInitScript(OBSERVER);
  await page.goto(`${base}/ui/#/resources?project=p-07&page_size=${CHANGES}`);
  await page.getByRole('status').getByText('Live', { exact: true }).waitFor();
  const urns = (await page
    .locator('tr[data-urn]')
    .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-urn')))) as string[];
  const latencies: number[] = [];
  for (const urn of urns) {
    const sent = Date.now();
    const res = await fetch(`${api}/resources/${urn}/actions/${NOOP_ACTION}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    if (res.status !== 202) throw new Error(`${NOOP_ACTION} on ${urn} answered ${res.status}`);
    const shown = await poll(
      () =>
        page.evaluate(
          `window.__marks.find((m) => m.urn === ${JSON.stringify(urn)} && m.text.startsWith('PENDING'))?.at`,
        ) as Promise<number | undefined>,
      `${urn} to show PENDING`,
    );
    latencies.push(shown - sent);
  }
  await page.close();
  return latencies;
}

/** Polls until `check` gives a value. */
async function poll<T>(check: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

await main();
