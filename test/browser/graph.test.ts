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
 * The dependency graph page: every resource of a project drawn (by dagre,
 * fetched only when the graph is first drawn) with its edges, each node a link
 * to its resource that a click or the keyboard opens.
 */
const GRANTS = {
  admin: { role: 'admin', projects: ['*'] },
  'viewer-g': { role: 'viewer', projects: ['g'] },
} as const;
const urnOf = (name: string) => `orn:steward:stepper:g:${name}`;
/** Each resource and what it depends on (by dependency name). */
const SHAPE: Record<string, Record<string, string>> = {
  db: {},
  cache: {},
  api: { base: 'db', other: 'cache' },
  web: { base: 'api' },
  lonely: {},
};

describeOneDialect('sqlite', 'console: dependency graph', () => {
  const { openPage } = useBrowser();
  const stepper = createStepperModule();
  let s: ConsoleSteward<typeof GRANTS>;
  const auth = () => ({ authorization: `Bearer ${s.tokens.admin}` });

  beforeAll(async () => {
    s = await startConsoleSteward({
      grants: GRANTS,
      overrides: { extraModules: [{ definition: stepper.definition, origin: 'test' }] },
    });
    for (const [name, deps] of Object.entries(SHAPE)) {
      const dependencies = Object.fromEntries(
        Object.entries(deps).map(([key, target]) => [key, urnOf(target)]),
      );
      const body = { kind: 'stepper', project: 'g', name, spec: { configs: {}, dependencies } };
      expect((await call('POST', `${s.api}/resources`, body, auth())).status).toBe(202);
    }
    // Another project's resource, which project g's graph must not draw.
    const elsewhere = { kind: 'stepper', project: 'h', name: 'db', spec: { configs: {} } };
    expect((await call('POST', `${s.api}/resources`, elsewhere, auth())).status).toBe(202);
    await waitFor(
      async () =>
        (await call('GET', `${s.api}/resources?project=g&status=COMPLETED`, undefined, auth())).body
          .resources.length === Object.keys(SHAPE).length,
      'the resources of project g to be COMPLETED',
    );
  });
  afterAll(() => s.close());

  it('draws every resource of the project with its edges, and a node opens its resource', async () => {
    const page = await openSignedIn(openPage, s, s.tokens.admin, '#/resources');
    const scripts: string[] = [];
    page.on('request', (request) => scripts.push(request.url()));
    await page.getByRole('table', { name: 'Resources' }).waitFor();
    // The layout library is not part of the first load.
    expect(scripts.filter((url) => url.includes('dagre'))).toEqual([]);

    await page.getByRole('link', { name: 'Graph' }).click();
    await page.getByRole('button', { name: 'g', exact: true }).click();
    const graph = page.getByRole('group', { name: 'Dependency graph of project g' });
    const nodes = graph.getByRole('link');
    await waitFor(async () => (await nodes.count()) === Object.keys(SHAPE).length, 'five nodes');
    expect(scripts.some((url) => url.includes('dagre'))).toBe(true);
    for (const name of Object.keys(SHAPE))
      await graph.getByRole('link', { name: `${name} COMPLETED` }).waitFor();
    const edges = await graph
      .locator('[data-edge]')
      .evaluateAll((paths) => paths.map((path) => path.getAttribute('data-edge')));
    const expected = Object.entries(SHAPE).flatMap(([name, deps]) =>
      Object.values(deps).map((target) => `${urnOf(name)} ${urnOf(target)}`),
    );
    expect(edges.sort()).toEqual(expected.sort());
    // The status is written on each node, not shown by colour alone.
    expect(await graph.getByText('COMPLETED', { exact: true }).count()).toBe(5);
    await checkAccessibility(page);
    await screenshot(page, 'graph');

    await graph.getByRole('link', { name: /^web / }).click();
    await page.getByRole('heading', { level: 1, name: 'web' }).waitFor();
    expect(consoleErrors(page)).toEqual([]);
  });

  it('is reachable by keyboard and colours a status change live', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    stepper.gate((urn, step) => (urn === urnOf('lonely') && step === 'apply' ? held : undefined));
    const page = await openSignedIn(openPage, s, s.tokens['viewer-g'], '#/graph?project=g');
    const graph = page.getByRole('group', { name: 'Dependency graph of project g' });
    await graph.getByRole('link', { name: 'lonely COMPLETED' }).waitFor();
    await page.getByRole('status').getByText('Live', { exact: true }).waitFor();

    const patch = { configs: { note: 'changed' } };
    expect(
      (await call('PATCH', `${s.api}/resources/${urnOf('lonely')}`, patch, auth())).status,
    ).toBe(202);
    await graph.getByRole('link', { name: 'lonely PENDING (update)' }).waitFor();
    release();
    const lonely = graph.getByRole('link', { name: 'lonely COMPLETED' });
    await lonely.waitFor();
    stepper.gate(() => undefined);

    // Tab moves through the nodes; Enter opens the focused one.
    await lonely.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'lonely' }).waitFor();
  });
});
