import { checkAccessibility, consoleErrors, screenshot, useBrowser } from '../helpers/browser.js';
import {
  adminAuth,
  createWidget,
  fieldError,
  type FormsSteward,
  hasFocus,
  holdsFocus,
  postFromPage,
  readWidget,
  resourceRoute,
  startFormsSteward,
} from '../helpers/console-forms.js';
import { openSignedIn } from '../helpers/console-steward.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { call, waitFor } from '../helpers/harness.js';

/**
 * The resource's actions in a real Chromium against a real Steward: buttons from
 * allowed_actions, a module action's generated params form, the edit form with
 * If-Match (a 412 when the resource changed behind the page), the delete dialog
 * naming what goes, and a viewer who gets no buttons and a 403 anyway.
 */
describeOneDialect('sqlite', 'console: resource actions', () => {
  const { openPage } = useBrowser();
  let s: FormsSteward;
  beforeAll(async () => {
    s = await startFormsSteward();
  });
  afterAll(() => s.close());

  const openResource = async (urn: string, token = s.tokens.editor) => {
    const page = await openSignedIn(openPage, s, token, resourceRoute(urn));
    await page.getByRole('heading', { name: urn.split(':').pop() }).waitFor();
    return page;
  };

  it('runs a module action from its generated params form, in a dialog that is keyboard usable', async () => {
    const urn = await createWidget(s, 'acted', { size: 1 });
    const page = await openResource(urn);
    const writes: Array<{ path: string; key: string | undefined }> = [];
    page.on('request', (request) => {
      if (request.method() === 'POST')
        writes.push({
          path: new URL(request.url()).pathname,
          key: request.headers()['idempotency-key'],
        });
    });
    const open = page.getByRole('button', { name: 'Run resize…' });
    await open.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Run resize on acted' });
    await dialog.waitFor();
    // Focus moved into the dialog; Escape closes it and gives focus back.
    expect(await holdsFocus(dialog)).toBe(true);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await hasFocus(open)).toBe(true);

    await page.keyboard.press('Enter');
    await dialog.getByLabel('size').fill('7');
    await checkAccessibility(page);
    await screenshot(page, 'actions');
    await dialog.getByLabel('size').fill('11');
    await dialog.getByRole('button', { name: 'Run resize' }).click();
    expect(await fieldError(page, dialog.getByLabel('size'))).toContain('must be <= 10');
    await dialog.getByLabel('size').fill('7');
    await dialog.getByRole('button', { name: 'Run resize' }).click();
    await dialog.waitFor({ state: 'detached' });
    await waitFor(async () => {
      const { status, resource } = await readWidget(s, urn);
      return status === 'COMPLETED' && resource.spec.configs.size === 7;
    }, 'the resize to be done');
    // Through the typed client: the URN in the path as it is (its colons too, as docs/api.md
    // says), and each of the two sends (the refused one, the accepted one) with a key of its own.
    expect(writes.map((sent) => sent.path)).toEqual([
      `/api/v1beta1/resources/${urn}/actions/resize`,
      `/api/v1beta1/resources/${urn}/actions/resize`,
    ]);
    const keys = writes.map((sent) => sent.key ?? '');
    expect(keys.every((key) => /^[0-9a-f-]{32,36}$/.test(key))).toBe(true);
    expect(new Set(keys).size).toBe(2);
    expect(consoleErrors(page)).toEqual([]);
  });

  it('edits with If-Match: a change made behind the page answers 412, shown with a reload', async () => {
    const urn = await createWidget(s, 'edited', { size: 2, note: 'first', api_key: 'k-1' });
    const page = await openResource(urn);
    await page.getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit edited' });
    // Pre-filled from the spec, the secret empty (an empty one keeps the stored value).
    expect(await dialog.getByLabel('note').inputValue()).toBe('first');
    expect(await dialog.getByLabel('api_key').inputValue()).toBe('');
    await dialog.getByLabel('note').fill('second');
    await checkAccessibility(page);

    const behind = await call(
      'PATCH',
      `${s.api}/resources/${urn}`,
      { labels: { by: 'api' } },
      adminAuth(s),
    );
    expect(behind.status).toBe(202);
    await waitFor(
      async () => (await readWidget(s, urn)).status === 'COMPLETED',
      'the change behind',
    );

    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog
      .getByRole('alert')
      .getByText('Someone else changed this resource; reload')
      .waitFor();
    expect((await readWidget(s, urn)).resource.spec.configs.note).toBe('first');
    await dialog.getByRole('button', { name: 'Reload' }).click();
    // The resource page's spec section names the version it shows.
    await page.getByText(/^Version 2;/).waitFor();

    await page.getByRole('button', { name: 'Edit' }).click();
    await dialog.getByLabel('note').fill('second');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    await waitFor(async () => {
      const { status, resource } = await readWidget(s, urn);
      return status === 'COMPLETED' && resource.spec.configs.note === 'second';
    }, 'the edit to be done');
  });

  it('names what a delete removes: the resource, and with cascade its dependents', async () => {
    const base = await createWidget(s, 'parent');
    const child = await createWidget(s, 'child', { size: 1 }, { base });
    const page = await openResource(base);
    await page.getByRole('button', { name: 'Delete…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete parent' });
    await dialog.getByText('These resources depend on it').waitFor();
    await dialog.getByRole('listitem').filter({ hasText: child }).waitFor();
    expect(await dialog.getByRole('button', { name: 'Delete parent' }).isDisabled()).toBe(true);

    await dialog.getByLabel('Cascade', { exact: false }).check();
    const list = dialog.getByRole('list', { name: 'Resources to delete' });
    await list.waitFor();
    expect(await list.getByRole('listitem').allTextContents()).toEqual([child, base]);
    await checkAccessibility(page);
    await screenshot(page, 'delete-dialog');
    await dialog.getByRole('button', { name: 'Delete 2 resources' }).click();
    await waitFor(
      async () =>
        (await readWidget(s, base)).status === 'GONE' &&
        (await readWidget(s, child)).status === 'GONE',
      'both resources gone',
    );
  });

  it('makes a schedule (cron and time zone, the request a module action), and pauses and resumes', async () => {
    const urn = await createWidget(s, 'timed');
    const page = await openResource(urn);
    await page.getByRole('button', { name: 'Schedule…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Schedule a request for timed' });
    expect(await dialog.getByLabel('Request', { exact: false }).inputValue()).toBe('resize');
    await dialog.getByLabel('size').fill('4');
    await dialog.getByLabel('Repeatedly, on a cron schedule').check();
    const cron = dialog.getByRole('textbox', { name: 'Cron (required)' });
    await cron.fill('every night');
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    expect(await fieldError(page, cron)).not.toBe('');
    await cron.fill('0 2 * * *');
    await dialog.getByLabel('Time zone').fill('Europe/Berlin');
    await checkAccessibility(page);
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    await dialog.getByRole('status').getByText('Scheduled.').waitFor();
    const { body } = await call(
      'GET',
      `${s.api}/resources/${urn}/schedules`,
      undefined,
      adminAuth(s),
    );
    expect(body.schedules).toHaveLength(1);
    expect(body.schedules[0]).toMatchObject({
      cron: '0 2 * * *',
      timezone: 'Europe/Berlin',
      request: { action: 'resize', params: { size: 4 } },
    });
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('button', { name: 'Resume' }).waitFor();
    expect((await readWidget(s, urn)).resource.state.paused).toBe(true);
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('button', { name: 'Pause' }).waitFor();
    expect((await readWidget(s, urn)).resource.state.paused).toBe(false);
  });

  it('shows a viewer no write buttons, and a write it sends anyway is refused 403', async () => {
    const urn = await createWidget(s, 'watched');
    const page = await openResource(urn, s.tokens.viewer);
    expect(await page.getByRole('region', { name: 'Actions' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /Edit|Delete|Run|Pause|Schedule/ }).count()).toBe(
      0,
    );
    const status = await postFromPage(page, `/api/v1beta1/resources/${urn}/pause`);
    expect(status).toBe(403);
  });
});
