import { checkAccessibility, consoleErrors, screenshot, useBrowser } from '../helpers/browser.js';
import {
  type ConsoleSteward,
  createFake,
  openSignedIn,
  startConsoleSteward,
} from '../helpers/console-steward.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { createFakeModule } from '../helpers/fake-module.js';

/** The activity page: the newest operations and the live events, of the caller's projects only. */
const GRANTS = {
  admin: { role: 'admin', projects: ['*'] },
  'viewer-a': { role: 'viewer', projects: ['a'] },
} as const;

describeOneDialect('sqlite', 'console: activity page', () => {
  const { openPage } = useBrowser();
  const fake = createFakeModule();
  let s: ConsoleSteward<typeof GRANTS>;
  const create = (project: string, name: string) => createFake(s, s.tokens.admin, project, name);

  beforeAll(async () => {
    s = await startConsoleSteward({
      grants: GRANTS,
      overrides: { extraModules: [{ definition: fake.definition, origin: 'test' }] },
    });
    expect((await create('a', 'earlier')).status).toBe(202);
  });
  afterAll(() => s.close());

  it('lists the newest operations and adds events and operations as they happen', async () => {
    const page = await openSignedIn(openPage, s, s.tokens.admin, '#/activity');
    const operations = page.getByRole('table', { name: 'Operations, newest first' });
    await operations.getByRole('link', { name: 'orn:steward:fake:a:earlier' }).waitFor();
    await page.getByRole('status').getByText('Live', { exact: true }).waitFor();

    expect((await create('b', 'later')).status).toBe(202);
    const events = page.getByRole('list', { name: 'Events, newest first' });
    await events
      .getByRole('listitem')
      .filter({ hasText: 'resource.created' })
      .getByRole('link', { name: 'orn:steward:fake:b:later' })
      .waitFor();
    await events.getByText('PENDING → COMPLETED').waitFor();
    const row = operations.getByRole('row').filter({ hasText: 'orn:steward:fake:b:later' });
    await row.getByText('succeeded').waitFor();
    await checkAccessibility(page);
    await screenshot(page, 'activity');
    expect(consoleErrors(page)).toEqual([]);
  });

  it("shows a viewer its projects' activity only", async () => {
    const page = await openSignedIn(openPage, s, s.tokens['viewer-a'], '#/activity');
    await page.getByRole('status').getByText('Live', { exact: true }).waitFor();
    expect((await create('b', 'hidden')).status).toBe(202);
    expect((await create('a', 'shown')).status).toBe(202);
    const events = page.getByRole('list', { name: 'Events, newest first' });
    await events.getByRole('link', { name: 'orn:steward:fake:a:shown' }).first().waitFor();
    // Events arrive in order: b:hidden was committed before a:shown, so it would be here by now.
    expect(await page.getByText('orn:steward:fake:b:').count()).toBe(0);
    const operations = page.getByRole('table', { name: 'Operations, newest first' });
    await operations.getByRole('link', { name: 'orn:steward:fake:a:shown' }).waitFor();
    expect(await operations.getByText('orn:steward:fake:b:').count()).toBe(0);
  });
});
