import type { Express, Response } from 'express';

/** Where a response keeps its callback: in `res.locals`, so the response object itself gets no new property. */
const ANSWERED = Symbol('answered');
/** Set on a response prototype once its two methods are wrapped. */
const WRAPPED = Symbol('answer hooks');

/**
 * Wraps, once, the two methods through which an answer of `app` goes out, on the app's
 * response prototype (express sets it on each response before any middleware runs), so
 * that `whenAnswered` can hear of them. Wrapping them on each response instead gave every
 * response two own properties holding new closures, about 4 % of a GET's CPU
 * (docs/decisions.md, "Per-request costs, second round").
 */
export function installAnswerHooks(app: Express): void {
  const response = app.response as Response & { [WRAPPED]?: true };
  if (response[WRAPPED]) return;
  // The methods wrapped are looked up at each call, so a later patch of Node's (an APM agent's) still runs.
  const inner = Object.getPrototypeOf(response) as Response;
  response.writeHead = function (this: Response, ...args: Parameters<Response['writeHead']>) {
    const result = inner.writeHead.apply(this, args);
    answered(this);
    return result;
  } as Response['writeHead'];
  response.end = function (this: Response, ...args: Parameters<Response['end']>) {
    answered(this);
    return inner.end.apply(this, args);
  } as Response['end'];
  response[WRAPPED] = true;
}

/**
 * Calls `callback` once, when the head goes out, or at `end()` when it never does
 * (the client left and the socket is gone). Not on 'finish', which never comes for
 * a client that left. One callback a response; the app must have its hooks
 * (installAnswerHooks), or this throws rather than never calling.
 */
export function whenAnswered(res: Response, callback: () => void): void {
  if (!(res as Response & { [WRAPPED]?: true })[WRAPPED])
    throw new Error("whenAnswered needs the app's answer hooks (installAnswerHooks)");
  (res.locals as Record<symbol, unknown>)[ANSWERED] = callback;
}

function answered(res: Response): void {
  // `locals` is express's: a response that did not come through an app (none here) has none.
  const locals = res.locals as Record<symbol, (() => void) | undefined> | undefined;
  const callback = locals?.[ANSWERED];
  if (!callback) return;
  locals[ANSWERED] = undefined;
  callback();
}
