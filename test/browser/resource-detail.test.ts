import type { Page } from 'playwright-core';

import { checkAccessibility, consoleErrors, screenshot, useBrowser } from '../helpers/browser.js';
import {
  type ConsoleSteward,
  openSignedIn,
  startConsoleSteward,
} from '../helpers/console-steward.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { call, waitFor } from '../helpers/harness.js';
import { createStepperModule } from '../helpers/stepper-module.js';

/**
 * The resource page in a real Chromium against a real Steward: every section of
 * a resource, a status change and new log lines reaching the open page live, the
 * diff between two revisions, links to dependents, and a secret config that
 * never reaches the page, its storage or a URL.
 */
const GRANTS = { admin: { role: 'admin', projects: ['*'] } } as const;
const PLANTED = 'planted-secret-5f3a9c';
const urnOf = (name: string) => `orn:steward:stepper:d:${name}`;
const route = (name: string) => `#/resources/${encodeURIComponent(urnOf(name))}`;

describeOneDialect('sqlite', 'console: resource page', () => {
  const { openPage } = useBrowser();
  const stepper = createStepperModule();
  let s: ConsoleSteward<typeof GRANTS>;
  const auth = () => ({ authorization: `Bearer ${s.tokens.admin}` });
  const api = (method: string, path: string, body?: unknown) =>
    call(method, `${s.api}${path}`, body, auth());
  const settled = (name: string) =>
    waitFor(
      async () =>
        (await api('GET', `/resources/${urnOf(name)}`)).body.state?.status === 'COMPLETED',
      `${name} to be COMPLETED`,
    );
  /** Requests the pages made: a secret must be in none of their URLs. */
  const urls: string[] = [];
  const open = async (to: string): Promise<Page> => {
    const page = await openSignedIn(openPage, s, s.tokens.admin, to);
    page.on('request', (request) => urls.push(request.url()));
    return page;
  };

  beforeAll(async () => {
    s = await startConsoleSteward({
      grants: GRANTS,
      overrides: { extraModules: [{ definition: stepper.definition, origin: 'test' }] },
    });
    const create = (name: string, configs: object, dependencies = {}) =>
      api('POST', '/resources', {
        kind: 'stepper',
        project: 'd',
        name,
        spec: { configs, dependencies },
      });
    expect((await create('base', { note: 'v1', password: PLANTED })).status).toBe(202);
    await settled('base');
    expect(
      (await api('PATCH', `/resources/${urnOf('base')}`, { configs: { note: 'v2', size: 3 } }))
        .status,
    ).toBe(202);
    await settled('base');
    expect((await create('app', { note: 'app' }, { base: urnOf('base') })).status).toBe(202);
    await settled('app');
    expect(
      (
        await api('POST', `/resources/${urnOf('base')}/schedules`, {
          request: { action: 'update', configs: { size: 5 } },
          cron: '0 3 * * *',
        })
      ).status,
    ).toBe(201);
    // A refresh that finds the backend's note changed: drift to show.
    stepper.observe('edited by hand');
    expect((await api('POST', `/resources/${urnOf('base')}/refresh`)).status).toBe(202);
    await waitFor(
      async () => (await api('GET', `/resources/${urnOf('base')}`)).body.state.drift !== null,
      'the refresh of base',
    );
  });
  afterAll(() => s.close());

  it('shows spec, state, output, drift, revisions, operations, logs, schedules and dependents', async () => {
    const page = await open(route('base'));
    await page.getByRole('heading', { level: 1, name: 'base' }).waitFor();
    const configs = page.getByRole('definition').filter({ hasText: 'v2' });
    await configs.first().waitFor();
    const state = page.getByRole('region', { name: 'State' });
    await state.getByText('COMPLETED').first().waitFor();
    await state
      .getByRole('table', { name: 'Drifted configs' })
      .getByText('"edited by hand"')
      .waitFor();
    const revisions = page.getByRole('table', { name: 'Revisions, newest first' });
    await waitFor(async () => (await revisions.locator('tbody tr').count()) === 2, 'two revisions');
    const operations = page.getByRole('table', {
      name: 'Operations of this resource, newest first',
    });
    await operations
      .getByRole('row')
      .filter({ hasText: 'refresh' })
      .getByText('succeeded')
      .waitFor();
    await page
      .getByRole('table', { name: 'Schedules of this resource' })
      .getByText('cron 0 3 * * *')
      .waitFor();
    const logs = page.getByRole('list', { name: 'Log lines' });
    await logs.getByText('step verify done').first().waitFor();
    // Steward redacts the secret config in log lines.
    await logs.getByText('password [secret]').first().waitFor();
    await page.getByRole('link', { name: urnOf('app') }).waitFor();
    await page.getByRole('status').getByText('Live', { exact: true }).waitFor();
    await checkAccessibility(page);
    await screenshot(page, 'resource');

    await page.getByRole('link', { name: urnOf('app') }).click();
    await page.getByRole('heading', { level: 1, name: 'app' }).waitFor();
    await page
      .getByRole('region', { name: 'Dependencies' })
      .getByRole('link', { name: urnOf('base') })
      .waitFor();
    expect(consoleErrors(page)).toEqual([]);
  });

  it('shows a status change, the steps left and new log lines on the open page without a reload', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    stepper.gate((urn, step) => (urn === urnOf('slow') && step === 'apply' ? held : undefined));
    expect(
      (
        await api('POST', '/resources', {
          kind: 'stepper',
          project: 'd',
          name: 'slow',
          spec: { configs: {} },
        })
      ).status,
    ).toBe(202);
    const page = await open(route('slow'));
    const state = page.getByRole('region', { name: 'State' });
    await state.getByText('PENDING (create)').first().waitFor();
    const steps = page.getByRole('list', { name: 'Steps left' });
    await waitFor(
      async () =>
        (await steps.getByRole('listitem').allTextContents()).join('|').startsWith('apply'),
      'apply and verify left',
    );
    const logs = page.getByRole('list', { name: 'Log lines' });
    await logs.getByText('step apply started').waitFor();
    await page.getByRole('status').getByText('Live', { exact: true }).waitFor();
    await page.evaluate('window.stillTheSamePage = true');

    stepper.log(urnOf('slow'), 'a line written while the page is open');
    await logs.getByText('a line written while the page is open').waitFor();
    release();
    await state.getByText('COMPLETED').first().waitFor();
    await logs.getByText('step verify done').waitFor();
    await waitFor(async () => (await steps.count()) === 0, 'no steps left');
    expect(await page.evaluate('window.stillTheSamePage')).toBe(true);
    stepper.gate(() => undefined);
  });

  it('shows the diff between any two revisions', async () => {
    expect(
      (
        await api('PATCH', `/resources/${urnOf('base')}`, {
          configs: { note: 'v3' },
          labels: { tier: 'gold' },
        })
      ).status,
    ).toBe(202);
    await settled('base');
    const page = await open(route('base'));
    const diff = () => page.getByRole('table', { name: /^Changes from version/ });
    // Newest against the one before: the note and the new label.
    await diff().getByRole('row').filter({ hasText: '/configs/note' }).getByText('"v3"').waitFor();
    await diff().getByRole('row').filter({ hasText: '/labels/tier' }).getByText('added').waitFor();

    // Any two: the first against the newest.
    const version = (n: number) =>
      page.getByLabel('From revision').locator('option', { hasText: `version ${n} ` });
    await page
      .getByLabel('From revision')
      .selectOption({ label: (await version(1).textContent())! });
    await page.getByRole('table', { name: 'Changes from version 1 to version 3' }).waitFor();
    const note = diff().getByRole('row').filter({ hasText: '/configs/note' });
    await note.getByText('"v1"').waitFor();
    await note.getByText('"v3"').waitFor();
    await diff().getByRole('row').filter({ hasText: '/labels/tier' }).waitFor();
    // size went 1 → 3 → 1 (a PATCH of configs replaces them): versions 1 and 3 agree on it.
    expect(await diff().getByRole('row').filter({ hasText: '/configs/size' }).count()).toBe(0);
    await checkAccessibility(page);
  });

  it('never puts a secret config in the DOM, in storage or in a URL', async () => {
    const page = await open(route('base'));
    await page
      .getByRole('list', { name: 'Log lines' })
      .getByText('password [secret]')
      .first()
      .waitFor();
    await page.getByRole('table', { name: 'Revisions, newest first' }).waitFor();
    const storage = await page.evaluate<string>(
      'JSON.stringify([{ ...sessionStorage }, { ...localStorage }])',
    );
    expect(await page.content()).not.toContain(PLANTED);
    expect(storage).not.toContain(PLANTED);
    expect(await page.content()).not.toContain('stepper-output-secret');
    expect([...urls, page.url()].filter((url) => url.includes(PLANTED))).toEqual([]);
    expect(urls.length).toBeGreaterThan(0);
  });
});
