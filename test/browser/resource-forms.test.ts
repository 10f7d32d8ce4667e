import type { Page } from 'playwright-core';

import { checkAccessibility, consoleErrors, screenshot, useBrowser } from '../helpers/browser.js';
import {
  createWidget,
  fieldError,
  type FormsSteward,
  hasFocus,
  pageTraces,
  readWidget,
  startFormsSteward,
} from '../helpers/console-forms.js';
import { openSignedIn } from '../helpers/console-steward.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { waitFor } from '../helpers/harness.js';

/**
 * Creating from the console in a real Chromium against a real Steward: the form
 * generated from the kind's configSchema, the dry-run preview, server errors at
 * their fields, and a writeOnly secret that never stays in the page.
 */
describeOneDialect('sqlite', 'console: create form', () => {
  const { openPage } = useBrowser();
  let s: FormsSteward;
  beforeAll(async () => {
    s = await startFormsSteward();
  });
  afterAll(() => s.close());

  const openCreate = async () => {
    const page = await openSignedIn(openPage, s, s.tokens.editor, '#/create');
    await page.getByRole('heading', { name: 'Create a resource' }).waitFor();
    await page.getByLabel('Kind').selectOption('widget');
    return page;
  };
  const configs = (page: Page) => page.getByRole('group', { name: 'Configs' });

  it('generates the form from the schema, previews a dry run, creates, and the row reaches COMPLETED live', async () => {
    const base = await createWidget(s, 'base');
    const page = await openCreate();
    // Only the projects the editor may write; defaults filled from the schema.
    expect(await page.getByLabel('Project').locator('option').allTextContents()).toEqual(['a']);
    const form = configs(page);
    expect(await form.getByLabel('color').inputValue()).not.toBe('');
    expect(await form.getByLabel('color').locator('option:checked').textContent()).toBe('green');
    expect(await form.getByLabel('enabled').isChecked()).toBe(true);
    expect(await form.getByRole('group', { name: 'limits' }).getByLabel('cpu').count()).toBe(1);
    const size = form.getByLabel('size');
    expect(await size.getAttribute('required')).not.toBeNull();
    const help = await size.getAttribute('aria-describedby');
    expect(await page.locator(`[id="${help}"]`).textContent()).toContain('How many parts');

    await page.getByLabel('Name', { exact: false }).fill('made-here');
    await page.getByLabel('Labels').fill('team=ops');
    await page.getByLabel('base').selectOption(base);
    await size.fill('3');
    await form.getByLabel('color').selectOption('blue');
    await form.getByLabel('note').fill('from the console');
    await form.getByRole('group', { name: 'limits' }).getByLabel('cpu').fill('2');
    await form.getByRole('button', { name: 'Add tags item' }).click();
    await form.getByLabel('tags item 1').fill('first');
    await form.getByRole('button', { name: 'Add tags item' }).click();
    await form.getByLabel('tags item 2').fill('second');
    await form.getByRole('button', { name: 'Remove tags item 1' }).click();

    await page.getByRole('button', { name: 'Preview (dry run)' }).click();
    const preview = page.getByRole('status').filter({ hasText: 'nothing was stored' });
    await preview.getByText('/configs/size').waitFor();
    await checkAccessibility(page);
    await screenshot(page, 'create', { fullPage: true });
    expect((await readWidget(s, 'orn:steward:widget:a:made-here')).status).toBe('GONE');

    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const urn = 'orn:steward:widget:a:made-here';
    await waitFor(
      () => decodeURIComponent(new URL(page.url()).hash) === `#/resources/${urn}`,
      'the resource page',
    );
    const stored = (await readWidget(s, urn)).resource;
    expect(stored.labels).toEqual({ team: 'ops' });
    expect(stored.spec.dependencies).toEqual({ base });
    expect(stored.spec.configs).toEqual({
      size: 3,
      color: 'blue',
      enabled: true,
      note: 'from the console',
      limits: { cpu: 2 },
      tags: ['second'],
    });

    await page.goto(`${s.console}#/resources?project=a`);
    await page.locator(`tr[data-urn="${urn}"]`).getByText('COMPLETED').waitFor();
    expect(consoleErrors(page)).toEqual([]);
  });

  it('shows a server validation error at the field its path names, and one without a path in a banner', async () => {
    const page = await openCreate();
    await page.getByLabel('Name', { exact: false }).fill('too-big');
    const size = configs(page).getByLabel('size');
    await size.fill('50');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    expect(await fieldError(page, size)).toContain('must be <= 10');
    // Focus goes to the field, so its message is read with it.
    await waitFor(() => hasFocus(size), 'focus on size');
    expect(await configs(page).getByLabel('note').getAttribute('aria-invalid')).toBeNull();
    await checkAccessibility(page);

    await size.fill('');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    // The field is still invalid from the first answer: wait for the second's message, not just
    // for aria-invalid (a loaded machine answered after the first message had been read again).
    await waitFor(
      async () => (await fieldError(page, size)).includes("must have required property 'size'"),
      "the field's error to be the second answer's",
    );

    await size.fill('2');
    await configs(page).getByLabel('note').fill('reject');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('alert').getByText('a note of "reject" is refused').waitFor();
    expect(await size.getAttribute('aria-invalid')).toBeNull();
    expect((await readWidget(s, 'orn:steward:widget:a:too-big')).status).toBe('GONE');
  });

  it('takes a writeOnly field in a password input and keeps its value nowhere after the submit', async () => {
    const secret = 'swordfish-4711';
    const page = await openCreate();
    await page.getByLabel('Name', { exact: false }).fill('keyed');
    await configs(page).getByLabel('size').fill('1');
    const key = configs(page).getByLabel('api_key');
    expect(await key.getAttribute('type')).toBe('password');
    expect(await key.getAttribute('autocomplete')).toBe('new-password');
    await key.fill(secret);
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('heading', { name: 'keyed' }).waitFor();

    expect(await pageTraces(page)).not.toContain(secret);
    // Steward kept it (sealed) though: the API never shows it.
    const { resource } = await readWidget(s, 'orn:steward:widget:a:keyed');
    expect(JSON.stringify(resource)).not.toContain(secret);
  });

  it('runs the seed scenario from the console alone: create, COMPLETED live, an action, delete', async () => {
    const urn = 'orn:steward:widget:a:seed';
    const page = await openCreate();
    await page.getByLabel('Name', { exact: false }).fill('seed');
    await configs(page).getByLabel('size').fill('2');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('heading', { name: 'seed' }).waitFor();

    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Resources' })
      .click();
    const row = page.locator(`tr[data-urn="${urn}"]`);
    await row.getByText('COMPLETED').waitFor();
    await row.getByRole('link', { name: 'seed' }).click();
    await page.getByRole('button', { name: 'Run resize…' }).click();
    const action = page.getByRole('dialog', { name: 'Run resize on seed' });
    await action.getByLabel('size').fill('5');
    await action.getByRole('button', { name: 'Run resize' }).click();
    await action.waitFor({ state: 'detached' });

    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Resources' })
      .click();
    await row.getByText('COMPLETED').waitFor();
    expect((await readWidget(s, urn)).resource.spec.configs.size).toBe(5);
    await row.getByRole('link', { name: 'seed' }).click();
    await page.getByRole('button', { name: 'Delete…' }).click();
    const remove = page.getByRole('dialog', { name: 'Delete seed' });
    await remove.getByRole('list', { name: 'Resources to delete' }).getByText(urn).waitFor();
    await remove.getByRole('button', { name: 'Delete seed' }).click();
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Resources' })
      .click();
    await waitFor(
      async () =>
        (await row.count()) === 0 || (await row.getAttribute('class'))?.includes('deleted'),
      'the row gone',
    );
    await waitFor(async () => (await readWidget(s, urn)).status === 'GONE', 'the resource gone');
    expect(consoleErrors(page)).toEqual([]);
  });

  it('tells a viewer it may not create', async () => {
    const page = await openSignedIn(openPage, s, s.tokens.viewer, '#/create');
    await page.getByText('Your role may not create resources in any project.').waitFor();
    expect(await page.getByRole('button', { name: 'Create' }).count()).toBe(0);
  });
});
