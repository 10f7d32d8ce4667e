import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { type Browser, chromium, type Page } from 'playwright-core';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const AXE = join(ROOT, 'node_modules', 'axe-core', 'axe.min.js');
let axeSource: string | undefined;
const AXE_SOURCE = () => (axeSource ??= readFileSync(AXE, 'utf8'));
const SCREENSHOTS = join(ROOT, 'docs', 'console');
/**
 * A browser test's own time limit (jest's default in jest.config.js is 30 s): a page load with
 * axe-core on a two-core machine running both jest passes took over 30 s in a CI run. A guard, not
 * a timed assertion: a test that passes passes as fast as before. `import.meta.jest` is jest's
 * object in an ES module; set here, it holds for every suite that imports this helper.
 */
const BROWSER_TEST_TIMEOUT_MS = 120_000;
(import.meta as unknown as { jest: { setTimeout(ms: number): void } }).jest.setTimeout(
  BROWSER_TEST_TIMEOUT_MS,
);

/**
 * How long a locator waits (Playwright's default is 30 s): in a CI run both jest passes beside a
 * browser suite kept the activity page from showing its first operation within 30 s once, where
 * it takes 3 s alone. A guard below the test's own limit, not a timed assertion.
 */
const BROWSER_WAIT_MS = 90_000;

/** Debian's Chromium (.ci/run installs it); browser downloads do not work where tests run. */
const CHROMIUM = process.env.STEWARD_TEST_CHROMIUM ?? '/usr/bin/chromium';

/**
 * One headless Chromium for the suite (started in beforeAll, closed in afterAll):
 * `browser()` gives it to a test, `openPage()` a fresh page with its own storage
 * (a new context), so a token signed in by one test is not seen by the next.
 */
export function useBrowser(): { browser(): Browser; openPage(url?: string): Promise<Page> } {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox'],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });
  const current = () => {
    if (!browser) throw new Error('the browser is started in beforeAll');
    return browser;
  };
  return {
    browser: current,
    async openPage(url) {
      const context = await current().newContext({ viewport: { width: 1280, height: 800 } });
      context.setDefaultTimeout(BROWSER_WAIT_MS);
      const page = await context.newPage();
      // A console error is a bug (a CSP refusal shows up here): collect them for the test to check.
      // Not Chromium's line for each 4xx answer: a 401 before sign-in is the console working.
      page.on('console', (message) => {
        if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
          consoleErrors(page).push(message.text());
      });
      page.on('pageerror', (error) => consoleErrors(page).push(String(error)));
      if (url) await page.goto(url);
      return page;
    },
  };
}

const ERRORS = new WeakMap<Page, string[]>();

/** The page's console errors and uncaught exceptions so far. */
export function consoleErrors(page: Page): string[] {
  let errors = ERRORS.get(page);
  if (!errors) ERRORS.set(page, (errors = []));
  return errors;
}

interface AxeResults {
  violations: Array<{
    id: string;
    impact: string | null;
    help: string;
    nodes: Array<{ target: unknown[] }>;
  }>;
}

/**
 * Runs axe-core on the page as it is now and fails on a serious or critical
 * violation, naming each rule and the elements it found.
 */
export async function checkAccessibility(page: Page): Promise<void> {
  // Not addScriptTag: it adds an inline <script>, which the console's CSP (rightly) refuses.
  // An evaluate runs over the DevTools protocol, outside the page's policy.
  await page.evaluate(AXE_SOURCE());
  const results = await page.evaluate(() =>
    (globalThis as unknown as { axe: { run(): Promise<AxeResults> } }).axe.run(),
  );
  const bad = results.violations.filter(
    (violation) => violation.impact === 'serious' || violation.impact === 'critical',
  );
  const summary = bad.map(
    (violation) =>
      `${violation.impact} ${violation.id}: ${violation.help} — ${violation.nodes
        .map((node) => JSON.stringify(node.target))
        .join(', ')}`,
  );
  expect(summary).toEqual([]);
}

/**
 * Saves a screenshot of the page to docs/console/{name}.png (docs/console.md shows them): when
 * STEWARD_SCREENSHOTS=1 or the file is missing. Not on every run: every run wrote new bytes (the
 * times on the page differ), so `npm test` left the checkout changed.
 */
export async function screenshot(
  page: Page,
  name: string,
  { fullPage = false } = {},
): Promise<void> {
  const path = join(SCREENSHOTS, `${name}.png`);
  if (process.env.STEWARD_SCREENSHOTS !== '1' && existsSync(path)) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path, fullPage });
}
