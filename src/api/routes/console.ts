import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { type Request, type Response, Router } from 'express';

import { sendError } from '../http-errors.js';

/**
 * The console's own policy (docs/console.md): its scripts, styles and fonts from
 * this origin only, no inline script or style, requests to this origin only, never
 * framed. It replaces the API's `default-src 'none'` on /ui alone.
 */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
});

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/** A file name under dist/ui as the build writes them: no dot segments, no hidden files. */
const SAFE_PATH = /^(?:[A-Za-z0-9_-][A-Za-z0-9._-]*\/)*[A-Za-z0-9_-][A-Za-z0-9._-]*$/;
/** esbuild's content-hashed names (main-ABCD1234.js): their bytes never change, so they may cache for good. */
const HASHED = /-[A-Z0-9]{8}\.(?:js|css)$/;

/**
 * GET /ui/…: the built console (`npm run build` writes dist/ui). The router is a
 * hash router, so only real files are served: /ui/ is index.html, anything else
 * not built is a 404. A precompressed `.br` or `.gz` is sent when the client takes
 * it. Without a build, a 503 says how to make one.
 */
export function consoleRoutes(dir: string = findConsoleDir()): Router {
  const router = Router();
  router.get('/ui', (req, res, next) => {
    // Routing is not strict: '/ui' matches '/ui/' too, which is the page itself.
    if (req.path.endsWith('/')) {
      next();
      return;
    }
    const query = req.originalUrl.indexOf('?');
    // Relative, so it holds under any mount point: /ui → /ui/.
    res.redirect(301, `ui/${query < 0 ? '' : req.originalUrl.slice(query)}`);
  });
  router.get('/ui/{*file}', async (req, res) => {
    for (const [name, value] of Object.entries(CONSOLE_SECURITY_HEADERS))
      res.setHeader(name, value);
    if (!existsSync(join(dir, 'index.html'))) {
      sendError(
        res,
        'unavailable',
        'the console is not built: run `npm run build` (it writes dist/ui) and restart Steward',
        { dir },
      );
      return;
    }
    const name = req.path === '/ui/' ? 'index.html' : req.path.slice('/ui/'.length);
    const extension = /\.[a-z0-9]+$/.exec(name)?.[0] ?? '';
    const type = TYPES[extension];
    if (!SAFE_PATH.test(name) || !type || !(await isFile(join(dir, name)))) {
      sendError(res, 'not_found', `the console has no file ${req.path}`);
      return;
    }
    await sendFile(req, res, join(dir, name), type, HASHED.test(name));
  });
  return router;
}

async function sendFile(
  req: Request,
  res: Response,
  file: string,
  type: string,
  immutable: boolean,
): Promise<void> {
  const encoding = await pickEncoding(req, file);
  res.setHeader('Content-Type', type);
  res.setHeader('Vary', 'Accept-Encoding');
  // index.html names the hashed files of the current build: always ask again for it.
  res.setHeader('Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  if (encoding) res.setHeader('Content-Encoding', encoding.name);
  // dotfiles 'allow': the temp folder tests build into may sit under a hidden directory.
  res.sendFile(encoding ? encoding.file : file, {
    lastModified: false,
    etag: false,
    cacheControl: false,
    dotfiles: 'allow',
  });
}

/** Brotli before gzip when the client takes it and the build wrote it. */
async function pickEncoding(
  req: Request,
  file: string,
): Promise<{ name: string; file: string } | undefined> {
  const accepted = String(req.headers['accept-encoding'] ?? '');
  for (const [name, suffix] of [
    ['br', '.br'],
    ['gzip', '.gz'],
  ] as const) {
    if (acceptsEncoding(accepted, name) && (await isFile(file + suffix)))
      return { name, file: file + suffix };
  }
  return undefined;
}

/** `br` in `gzip, deflate, br;q=1.0` (a `;q=0` refuses it). */
export function acceptsEncoding(header: string, name: string): boolean {
  return header.split(',').some((part) => {
    const [token, ...params] = part.trim().split(';');
    if (token?.trim().toLowerCase() !== name) return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** dist/ui under the package root, which sits above both src/ (tests) and dist/src/ (built). */
function findConsoleDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i += 1) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'dist', 'ui');
    dir = dirname(dir);
  }
  throw new Error('cannot find the package root of Steward (for dist/ui)');
}
