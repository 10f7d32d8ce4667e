import type { Request, Response } from 'express';

/**
 * A 200 with `body` as JSON, as express's `res.json` sends it (same headers: Content-Type
 * `application/json; charset=utf-8`, Content-Length; no body to a HEAD), in fewer steps: the
 * text goes to `end` as it is, where node writes it with the head in one piece, not as a Buffer
 * beside the head; the headers are set without express's lookups. A conditional request
 * (If-None-Match, If-Modified-Since) is left to `res.json`, which answers 304 when the ETag
 * set before matches. For the hot reads (GET /resources/{urn}): docs/decisions.md.
 */
export function sendJson(req: Request, res: Response, body: unknown): void {
  const headers = req.headers;
  if (headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined) {
    res.json(body);
    return;
  }
  const text = JSON.stringify(body);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text, 'utf8'));
  if (req.method === 'HEAD') res.end();
  else res.end(text, 'utf8');
}
