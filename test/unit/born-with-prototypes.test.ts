import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { ensureBuilt } from '../helpers/cli-run.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/request-maps.mjs', import.meta.url));

/** Whether the second and third requests' `req` and `res` ended with one V8 map (test/fixtures/request-maps.mjs). */
async function sameMaps(server: 'steward' | 'express'): Promise<unknown> {
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--allow-natives-syntax',
    FIXTURE,
    ...(server === 'express' ? ['express'] : []),
  ]);
  return JSON.parse(stdout) as unknown;
}

/**
 * express moves each request and response onto its prototypes with `Object.setPrototypeOf`, which
 * gives each object a map of its own, and every property added after it another: inline caches that
 * miss at every request (src/api/born-with-prototypes.ts). Steward's HTTP server makes them with
 * those prototypes already, so requests share their maps.
 */
describe('requests born with express prototypes', () => {
  // The fixture runs the built server (dist/): built from the sources as they are, not an older build.
  beforeAll(() => ensureBuilt());

  it("ends each request's req and res with the same maps as the request before", async () => {
    expect(await sameMaps('steward')).toEqual({ request: true, response: true });
  });

  it("is a difference express's own server shows (the fixture can tell maps apart)", async () => {
    expect(await sameMaps('express')).toEqual({ request: false, response: false });
  });
});
