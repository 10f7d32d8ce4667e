import { consoleErrors, useBrowser } from '../helpers/browser.js';
import {
  callAs,
  type ConsoleSteward,
  openSignedIn,
  startConsoleSteward,
} from '../helpers/console-steward.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { createStepperModule } from '../helpers/stepper-module.js';

/**
 * The requests a resource's page sends at one click, in a real Chromium against a
 * real Steward: Cancel the operation (a create held at a step), Retry (the
 * cancelled create, resumed) and Refresh, each showing up in the page's operations.
 */
const GRANTS = { admin: { role: 'admin', projects: ['*'] } } as const;
const URN = 'orn:steward:stepper:r:held';

describeOneDialect('sqlite', 'console: one-click requests', () => {
  const { openPage } = useBrowser();
  const stepper = createStepperModule();
  let s: ConsoleSteward<typeof GRANTS>;
  beforeAll(async () => {
    s = await startConsoleSteward({
      grants: GRANTS,
      overrides: { extraModules: [{ definition: stepper.definition, origin: 'test' }] },
    });
  });
  afterAll(() => s.close());

  it('cancels a running operation, retries it and refreshes, each operation shown on the page', async () => {
    // The create's first `apply` waits until the test lets it go; the retry's does not.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holds = 1;
    stepper.gate((urn, step) =>
      urn === URN && step === 'apply' && holds-- > 0 ? held : undefined,
    );
    const body = { kind: 'stepper', project: 'r', name: 'held', spec: { configs: {} } };
    expect((await callAs(s.tokens.admin)('POST', `${s.api}/resources`, body)).status).toBe(202);

    const page = await openSignedIn(
      openPage,
      s,
      s.tokens.admin,
      `#/resources/${encodeURIComponent(URN)}`,
    );
    const state = page.getByRole('region', { name: 'State' });
    await state.getByText('PENDING (create)').first().waitFor();
    await page.getByRole('list', { name: 'Log lines' }).getByText('step apply started').waitFor();
    const operations = page.getByRole('table', {
      name: 'Operations of this resource, newest first',
    });
    const operation = (action: string, status: string) =>
      operations
        .getByRole('row')
        .filter({ has: page.getByRole('rowheader', { name: action, exact: true }) })
        .filter({ hasText: status });

    await page.getByRole('button', { name: 'Cancel the operation' }).click();
    await operation('create', 'cancelled').waitFor();
    await state.getByText('ERROR').first().waitFor();
    release(); // the cancelled sync ends; what it returns is discarded

    await page.getByRole('button', { name: 'Retry' }).click();
    await operation('create', 'succeeded').waitFor();
    await state.getByText('COMPLETED').first().waitFor();

    await page.getByRole('button', { name: 'Refresh' }).click();
    await operation('refresh', 'succeeded').waitFor();
    expect(await operation('create', 'cancelled').count()).toBe(1);
    expect(consoleErrors(page)).toEqual([]);
    stepper.gate(() => undefined);
  });
});
