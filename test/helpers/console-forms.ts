import type { Locator, Page } from 'playwright-core';

import { type ConsoleSteward, startConsoleSteward } from './console-steward.js';
import { call, waitFor } from './harness.js';
import { widget } from './widget-module.js';

/** The forms suites' tokens: an admin, an editor and a viewer of project a. */
export const FORM_GRANTS = {
  admin: { role: 'admin', projects: ['*'] },
  editor: { role: 'editor', projects: ['a'] },
  viewer: { role: 'viewer', projects: ['a'] },
} as const;

export type FormsSteward = ConsoleSteward<typeof FORM_GRANTS>;

/** A real Steward with the `widget` test kind, serving the console. */
export function startFormsSteward(): Promise<FormsSteward> {
  return startConsoleSteward({
    grants: FORM_GRANTS,
    overrides: { extraModules: [{ definition: widget, origin: 'test' }] },
  });
}

/** Creates a widget through the API (as the admin) and waits until it is COMPLETED. */
export async function createWidget(
  s: FormsSteward,
  name: string,
  configs: Record<string, unknown> = { size: 1 },
  dependencies: Record<string, string> = {},
): Promise<string> {
  const answer = await call(
    'POST',
    `${s.api}/resources`,
    { kind: 'widget', project: 'a', name, spec: { configs, dependencies } },
    adminAuth(s),
  );
  expect(answer.status).toBe(202);
  const urn = answer.body.resource.urn as string;
  await waitFor(async () => (await readWidget(s, urn)).status === 'COMPLETED', `${urn} COMPLETED`);
  return urn;
}

export function adminAuth(s: FormsSteward): Record<string, string> {
  return { authorization: `Bearer ${s.tokens.admin}` };
}

/** The resource as the admin reads it: its status and document, or GONE after a delete. */
export async function readWidget(s: FormsSteward, urn: string) {
  const answer = await call('GET', `${s.api}/resources/${urn}`, undefined, adminAuth(s));
  if (answer.status === 404) return { status: 'GONE' as const, resource: undefined };
  return { status: answer.body.state.status as string, resource: answer.body };
}

/** The route of a resource's page, as the console links it. */
export function resourceRoute(urn: string): string {
  return `#/resources/${encodeURIComponent(urn)}`;
}

/** The error text a field points at with aria-describedby, once it is invalid. */
export async function fieldError(page: Page, field: Locator): Promise<string> {
  await waitFor(
    async () => (await field.getAttribute('aria-invalid')) === 'true',
    'the field invalid',
  );
  const ids = ((await field.getAttribute('aria-describedby')) ?? '').split(' ');
  const errorId = ids.find((id) => id.endsWith('-error'));
  if (!errorId) throw new Error(`the field has no error message in aria-describedby`);
  return (await page.locator(`[id="${errorId}"]`).textContent()) ?? '';
}

/*
 * Code run in the page reads the page's globals through `globalThis` or as source
 * text: the tests are compiled without the DOM library (they run in node).
 */
interface PageGlobals {
  document: { activeElement: unknown };
}

/** Whether the element has the focus. */
export function hasFocus(element: Locator): Promise<boolean> {
  return element.evaluate(
    (el) => el === (globalThis as unknown as PageGlobals).document.activeElement,
  );
}

/** Whether the focus is inside the element. */
export function holdsFocus(element: Locator): Promise<boolean> {
  return element.evaluate((el) =>
    el.contains((globalThis as unknown as PageGlobals).document.activeElement as typeof el),
  );
}

/** Everywhere a value typed into the page could stay: the DOM and input values, the URL, storage, history. */
export async function pageTraces(page: Page): Promise<string> {
  return (await page.evaluate(`JSON.stringify({
    html: document.documentElement.outerHTML,
    inputs: [...document.querySelectorAll('input, textarea')].map((input) => input.value),
    url: location.href,
    session: { ...sessionStorage },
    local: { ...localStorage },
    history: history.state,
  })`)) as string;
}

/** POST from the page with its signed-in token (what a script in the page could send). */
export async function postFromPage(page: Page, path: string): Promise<number> {
  return (await page.evaluate(`fetch(${JSON.stringify(path)}, {
    method: 'POST',
    headers: { Authorization: 'Bearer ' + sessionStorage.getItem('steward.token') },
  }).then((answer) => answer.status)`)) as number;
}
