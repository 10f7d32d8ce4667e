import { createHash } from 'node:crypto';

import type { Request, RequestHandler, Response } from 'express';

import { InvalidRequestError } from '../core/errors.js';
import type { IdempotencyRecord, IdempotencyWrite } from '../core/ports.js';
import type { Accepted } from '../core/requests/command-types.js';
import type { IdempotencyKeys, KeyTurn, StoredAnswer } from '../core/requests/idempotency-keys.js';
import { callerOf } from './auth/caller.js';
import { acceptedAnswer } from './routes/accepted-answer.js';

/** The methods that write; a key on any other is ignored (a read is safe to repeat as it is). */
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** 1 to 255 printable ASCII characters (Stripe's bound); anything else is a 400. */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
/** The answer headers a replay sends again; the rest (request id, security headers) are the replay's own. */
const REPLAYED_HEADERS = ['ETag', 'Location'];

const LOCAL = 'idempotency';

interface KeyedRequest {
  turn: KeyTurn;
  /** The accept transaction stored the answer: nothing is left to save. */
  recorded: boolean;
}

/**
 * `Idempotency-Key` on every write under the API prefix (docs/api.md "Idempotency keys"),
 * mounted after authentication (keys are the caller's) and the body parser (the body is part
 * of what a key stands for). A stored answer is replayed with `Idempotent-Replayed: true`; a key
 * used for another request is a 422, one still running a 409, a malformed one a 400.
 *
 * A route opts in to the crash-safe record by passing `requestOptions(req, …)` to a command and
 * answering with `sendAccepted`: the answer is then stored in the operation's own transaction.
 * Any other write route is covered too, by registering it behind this middleware: its 2xx answer
 * is stored before it is sent, in a transaction of its own (a crash between the two can run it again).
 */
export function idempotencyKeys(keys: IdempotencyKeys): RequestHandler {
  return async (req, res, next) => {
    const key = req.headers['idempotency-key'];
    if (key === undefined || !WRITES.has(req.method)) {
      next();
      return;
    }
    if (typeof key !== 'string' || !KEY_PATTERN.test(key))
      throw new InvalidRequestError(
        'the Idempotency-Key header must be 1 to 255 printable ASCII characters',
        { header: 'Idempotency-Key' },
      );
    const look = await keys.look(scopeOf(res), key, fingerprintOf(req));
    if ('replay' in look) {
      replay(res, look.replay);
      return;
    }
    const keyed: KeyedRequest = { turn: look.run, recorded: false };
    res.locals[LOCAL] = keyed;
    res.once('close', () => keyed.turn.release());
    saveBeforeSending(res, keyed);
    next();
  };
}

/** RequestOptions.idempotency of a keyed request: its 202 answer, to store with the operation. */
export function idempotencyOf(
  res: Response,
): ((accepted: Accepted) => IdempotencyWrite) | undefined {
  const keyed = res.locals[LOCAL] as KeyedRequest | undefined;
  return keyed && ((accepted) => keyed.turn.writeOf(acceptedAnswer(accepted)));
}

/**
 * Nothing is left to store for this request's key: the accept transaction stored its answer
 * (Accepted.idempotencyRecorded), or it wrote nothing (a dry run, which runs again with the key).
 */
export function settleKey(res: Response): void {
  const keyed = res.locals[LOCAL] as KeyedRequest | undefined;
  if (keyed) keyed.recorded = true;
}

/** A keyed request whose answer is still to be stored: it must be sent through `res.json`, which stores it first. */
export function keyAwaitsAnswer(res: Response): boolean {
  const keyed = res.locals[LOCAL] as KeyedRequest | undefined;
  return keyed !== undefined && !keyed.recorded;
}

/**
 * Open mode's one anonymous caller has one scope; with tokens each token name has its own, so
 * two callers never see each other's answers (and the anonymous scope is no token's).
 */
function scopeOf(res: Response): string {
  const caller = callerOf(res);
  return caller.authenticated ? `token:${caller.name}` : 'open';
}

/** What a key stands for: the method, the path with its query, and the body (its keys in any order). */
function fingerprintOf(req: Request): string {
  const request = [req.method, req.originalUrl, canonical(req.body ?? null)];
  return createHash('sha256').update(JSON.stringify(request)).digest('hex');
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((name) => [name, canonical((value as Record<string, unknown>)[name])]),
  );
}

function replay(res: Response, record: IdempotencyRecord): void {
  for (const [name, value] of Object.entries(record.headers)) res.setHeader(name, value);
  res.setHeader('Idempotent-Replayed', 'true');
  if (record.status === 204) res.status(204).end();
  else res.status(record.status).json(record.body);
}

/**
 * A 2xx JSON answer, or a 204, no accept transaction stored (pause, cancel, schedules, a cascade,
 * a route added later) is stored first, then sent. Error answers are not stored: they wrote nothing, so
 * the same key runs again. Should the store fail, the answer is sent anyway: the write is done.
 */
function saveBeforeSending(res: Response, keyed: KeyedRequest): void {
  const send = res.json.bind(res);
  res.json = (body: unknown) => {
    if (keyed.recorded || res.statusCode < 200 || res.statusCode > 299) return send(body);
    keyed.recorded = true;
    void keyed.turn
      .save(answerOf(res, body))
      .catch(() => undefined)
      .then(() => send(body));
    return res;
  };
  // A 204 (a schedule or a webhook deleted) has no body to send through `json`: stored as it ends.
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    if (keyed.recorded || res.statusCode !== 204) return end(...args);
    keyed.recorded = true;
    void keyed.turn
      .save(answerOf(res, null))
      .catch(() => undefined)
      .then(() => end(...args));
    return res;
  }) as Response['end'];
}

function answerOf(res: Response, body: unknown): StoredAnswer {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = res.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  return { status: res.statusCode, headers, body };
}
