import type { Request, Response } from 'express';

/**
 * `text` (a body already written as JSON), with the status set before (200 if none was), as
 * express's `res.json` sends it (same headers: Content-Type `application/json; charset=utf-8`,
 * Content-Length; no body to a HEAD), in fewer steps: the text goes to `end` as it is, where node
 * writes it with the head in one piece, not as a Buffer beside the head; the headers are set
 * without express's lookups. A conditional request (If-None-Match, If-Modified-Since) is left to
 * express's `res.send`, as `res.json` would leave it, which answers 304 when the ETag set before
 * matches (a GET's or HEAD's). For the hot paths (GET /resources/{urn}, and a write's 202):
 * docs/decisions.md.
 */
export function sendJsonText(req: Request, res: Response, text: string): void {
  const headers = req.headers;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  if (headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined) {
    res.send(text);
    return;
  }
  res.setHeader('Content-Length', Buffer.byteLength(text, 'utf8'));
  if (req.method === 'HEAD') res.end();
  else res.end(text, 'utf8');
}
