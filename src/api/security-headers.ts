import type { RequestHandler } from 'express';

/**
 * On every answer, errors and streams included: no MIME sniffing (a JSON body
 * holding a user's string is never run as HTML), no caching (answers carry project
 * data and depend on the token; the probes and /openapi.json get the same, as
 * nothing is gained by caching them), and a policy that lets nothing load or frame
 * the answer. A web console will come with its own policy on its own routes.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
});

const HEADER_ENTRIES = Object.entries(SECURITY_HEADERS);

export const securityHeaders: RequestHandler = (_req, res, next) => {
  for (const [name, value] of HEADER_ENTRIES) res.setHeader(name, value);
  next();
};
