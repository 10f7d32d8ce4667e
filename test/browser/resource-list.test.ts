import type { Page } from 'playwright-core';

import { checkAccessibility, consoleErrors, screenshot, useBrowser } from '../helpers/browser.js';
import {
  callAs,
  type ConsoleSteward,
  createFake,
  openSignedIn,
  startConsoleSteward,
} from '../helpers/console-steward.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { createFakeModule } from '../helpers/fake-module.js';
import { waitFor } from '../helpers/harness.js';

/**
 * The resources page in a real Chromium against a real Steward: rows, cursor
 * paging, filters in the URL, live status changes, and the Create button only for
 * a role that may create.
 */
const GRANTS = {
  admin: { role: 'admin', projects: ['*'] },
  'viewer-a': { role: 'viewer', projects: ['a'] },
  'editor-b': { role: 'editor', projects: ['b'] },
} as const;
const IN_A = 25;

describeOneDialect('sqlite', 'console: resources page', () => {
  const { openPage } = useBrowser();
  const fake = createFakeModule();
  /** Creates in project c wait at this gate until a test opens it. */
  let openGate: () => void = () => undefined;
  let gate = new Promise<void>((resolve) => (openGate = resolve));
  let s: ConsoleSteward<typeof GRANTS>;
  const create = (project: string, name: string, labels: Record<string, string> = {}) =>
    createFake(s, s.tokens.admin, project, name, labels);

  beforeAll(async () => {
    fake.script((c) =>
      c.urn.includes(':c:') && c.action === 'create'
        ? { type: 'gate', until: gate }
        : { type: 'ok' },
    );
    s = await startConsoleSteward({
      grants: GRANTS,
      overrides: { extraModules: [{ definition: fake.definition, origin: 'test' }] },
    });
    const answers = await Promise.all([
      ...Array.from({ length: IN_A }, (_, i) =>
        create('a', `r-${String(i).padStart(2, '0')}`, { team: i % 3 === 0 ? 'ops' : 'web' }),
      ),
      create('b', 'b-1'),
      create('b', 'b-2'),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 202));
    await waitFor(
      async () =>
        (await callAs(s.tokens.admin)('GET', `${s.api}/resources?project=a&status=PENDING`)).body
          .resources.length === 0,
      'the resources of project a to be COMPLETED',
    );
  });
  afterAll(() => s.close());

  const rowNames = async (page: Page) =>
    page
      .getByRole('table', { name: 'Resources' })
      .locator('tbody th[scope=row] a')
      .allTextContents();

  it('lists one page of rows and pages on with the cursor', async () => {
    const page = await openSignedIn(
      openPage,
      s,
      s.tokens.admin,
      '#/resources?project=a&page_size=10',
    );
    await waitFor(async () => (await rowNames(page)).length === 10, 'the first page');
    expect((await rowNames(page))[0]).toBe('r-00');
    await checkAccessibility(page);
    await screenshot(page, 'resources');

    await page.getByRole('link', { name: 'Next page' }).click();
    await waitFor(async () => (await rowNames(page))[0] === 'r-10', 'the second page');
    await page.getByRole('link', { name: 'Next page' }).click();
    await waitFor(async () => (await rowNames(page))[0] === 'r-20', 'the last page');
    expect(await rowNames(page)).toHaveLength(IN_A - 20);
    expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(0);
    await page.getByRole('link', { name: 'First page' }).click();
    await waitFor(async () => (await rowNames(page))[0] === 'r-00', 'the first page again');
    expect(consoleErrors(page)).toEqual([]);
  });

  it('keeps the filters in the URL: a reload shows the same view', async () => {
    const page = await openSignedIn(openPage, s, s.tokens.admin, '#/resources');
    await page.getByLabel('Project').fill('a');
    await page.getByLabel('Labels').fill('team=ops');
    await page.getByLabel('Status').selectOption('COMPLETED');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const ops = Array.from({ length: IN_A }, (_, i) => i)
      .filter((i) => i % 3 === 0)
      .map((i) => `r-${String(i).padStart(2, '0')}`);
    await waitFor(async () => (await rowNames(page)).join() === ops.join(), 'the filtered rows');
    const url = new URL(page.url());
    // Empty filters are left out of the URL.
    expect(Object.fromEntries(new URLSearchParams(url.hash.split('?')[1]))).toEqual({
      project: 'a',
      status: 'COMPLETED',
      labels: 'team=ops',
    });

    await page.reload();
    await waitFor(
      async () => (await rowNames(page)).join() === ops.join(),
      'the rows after a reload',
    );
    expect(await page.getByLabel('Labels').inputValue()).toBe('team=ops');
    expect(await page.getByLabel('Status').inputValue()).toBe('COMPLETED');
  });

  it('shows a status change on the open page without a reload, and tells of new resources', async () => {
    expect((await create('c', 'slow-1')).status).toBe(202);
    const page = await openSignedIn(openPage, s, s.tokens.admin, '#/resources?project=c');
    const row = page.locator('tr[data-urn="orn:steward:fake:c:slow-1"]');
    await row.getByText('PENDING (create)').waitFor();
    await page.getByRole('status').getByText('Live', { exact: true }).waitFor();
    await page.evaluate('window.stillTheSamePage = true');

    openGate();
    gate = Promise.resolve();
    await row.getByText('COMPLETED').waitFor();
    expect(await page.evaluate('window.stillTheSamePage')).toBe(true);

    expect((await create('c', 'slow-2')).status).toBe(202);
    await page.getByText('1 new resource since this page was read').waitFor();
    await page.getByRole('button', { name: 'Show them' }).click();
    await waitFor(async () => (await rowNames(page)).length === 2, 'both rows');
    expect(await page.evaluate('window.stillTheSamePage')).toBe(true);
  });

  it('shows Create only where the role may create', async () => {
    const viewer = await openSignedIn(openPage, s, s.tokens['viewer-a'], '#/resources');
    await waitFor(async () => (await rowNames(viewer)).length > 0, "the viewer's rows");
    // A viewer of project a sees project a only.
    expect(new Set((await rowNames(viewer)).map((name) => name.slice(0, 2)))).toEqual(
      new Set(['r-']),
    );
    expect(await viewer.getByRole('link', { name: 'Create' }).count()).toBe(0);
    await checkAccessibility(viewer);

    const editor = await openSignedIn(openPage, s, s.tokens['editor-b'], '#/resources?project=b');
    await editor.getByRole('link', { name: 'Create' }).waitFor();
    await editor.goto(`${s.console}#/resources?project=a`);
    await editor.getByText('No resources match these filters.').waitFor();
    expect(await editor.getByRole('link', { name: 'Create' }).count()).toBe(0);
  });
});
