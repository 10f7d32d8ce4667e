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
 * The console on a phone (390 × 844 CSS pixels, a current phone's viewport): every page fits the
 * width (nothing to scroll sideways; a wide table scrolls inside its own box), the navigation is
 * there, and axe finds no serious or critical violation at that size either.
 */
const GRANTS = { admin: { role: 'admin', projects: ['*'] } } as const;
const PHONE = { width: 390, height: 844 };
const urnOf = (name: string) => `orn:steward:stepper:m:${name}`;

describeOneDialect('sqlite', 'console: on a phone', () => {
  const { openPage } = useBrowser();
  const stepper = createStepperModule();
  let s: ConsoleSteward<typeof GRANTS>;
  const api = (method: string, path: string, body?: unknown) =>
    call(method, `${s.api}${path}`, body, { authorization: `Bearer ${s.tokens.admin}` });

  beforeAll(async () => {
    s = await startConsoleSteward({
      grants: GRANTS,
      overrides: { extraModules: [{ definition: stepper.definition, origin: 'test' }] },
    });
    const create = (name: string, dependencies = {}) =>
      api('POST', '/resources', {
        kind: 'stepper',
        project: 'm',
        name,
        labels: { team: 'mobile', tier: 'web' },
        spec: { configs: { note: 'a note long enough to wrap on a narrow screen' }, dependencies },
      });
    expect((await create('base')).status).toBe(202);
    await waitFor(
      async () =>
        (await api('GET', `/resources/${urnOf('base')}`)).body.state?.status === 'COMPLETED',
      'base to be COMPLETED',
    );
  });
  afterAll(() => s?.close());

  /** Nothing on the page is wider than the viewport: the document does not scroll sideways. */
  const fitsTheWidth = (page: Page) =>
    page.evaluate(() => {
      // The page's globals, typed here: the tests' tsconfig has no DOM library.
      const view = globalThis as unknown as {
        document: { documentElement: { scrollWidth: number } };
        innerWidth: number;
      };
      return view.document.documentElement.scrollWidth <= view.innerWidth;
    });

  it.each([
    ['resources', '#/resources', 'Resources'],
    ['resource', `#/resources/${encodeURIComponent(urnOf('base'))}`, 'base'],
    ['create', '#/create?project=m', 'Create a resource'],
    ['graph', '#/graph?project=m', 'Dependency graph of m'],
    ['activity', '#/activity', 'Activity'],
  ])('the %s page fits a phone and passes axe', async (name, route, heading) => {
    const page = await openSignedIn(openPage, s, s.tokens.admin, route);
    await page.setViewportSize(PHONE);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    expect(await fitsTheWidth(page)).toBe(true);
    await checkAccessibility(page);
    if (name === 'resources' || name === 'resource') await screenshot(page, `phone-${name}`);
    expect(consoleErrors(page)).toEqual([]);
  });
});
