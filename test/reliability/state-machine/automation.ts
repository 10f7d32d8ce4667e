import { call, type JsonResponse } from '../../helpers/harness.js';
import type { Model } from './design.js';
import type { ModelSteward } from './steward.js';

/**
 * The automation API of issue 16 in the state machine test: every write the model sends
 * carries an `Idempotency-Key` and an `X-Request-Id` of its own, and is remembered here, so a
 * command can send one again (docs/api.md "Idempotency keys") and a checkpoint can find each
 * one in `GET /audit` (docs/api.md "Audit").
 */

/** A write the model sent, and what it was answered. */
export interface SentWrite {
  key: string;
  requestId: string;
  method: string;
  url: string;
  body: unknown;
  headers: Record<string, string>;
  res: JsonResponse;
  /** `?dry_run=true`: answered, not stored under its key. */
  dryRun: boolean;
}

interface Sent {
  next: number;
  writes: SentWrite[];
}

/** Per model (one a run), so a run's keys and request ids are the same whatever ran before it. */
const sentOf = new WeakMap<Readonly<Model>, Sent>();

function sent(m: Readonly<Model>): Sent {
  let s = sentOf.get(m);
  if (!s) sentOf.set(m, (s = { next: 0, writes: [] }));
  return s;
}

/** The writes `m` sent so far, oldest first. */
export const writesOf = (m: Readonly<Model>): readonly SentWrite[] => sent(m).writes;

/** Sends a write with a key and a request id of its own, and remembers it. */
export async function write(
  m: Model,
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  return send(m, `key-${sent(m).next}`, method, url, body, headers);
}

/** Sends a write with `key` (a new one, or one sent before), and remembers it. */
export async function send(
  m: Model,
  key: string,
  method: string,
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<JsonResponse> {
  const s = sent(m);
  const requestId = `rq-${s.next}`;
  s.next += 1;
  const res = await call(method, url, body, {
    ...headers,
    'idempotency-key': key,
    'x-request-id': requestId,
  });
  const dryRun = url.includes('dry_run=true');
  s.writes.push({ key, requestId, method, url, body, headers, res, dryRun });
  return res;
}

/** The writes whose answer is stored under their key: a 2xx (a 204 too) of a write that was not a dry run. */
export const replayable = (m: Readonly<Model>): SentWrite[] =>
  writesOf(m).filter(
    (w) =>
      w.res.status >= 200 &&
      w.res.status < 300 &&
      !w.dryRun &&
      !w.res.headers.get('idempotent-replayed'),
  );

/**
 * Every write the model sent is in `GET /audit` exactly once (by its request id), with its
 * method, status, outcome and error code; and every entry is one of them (the reads are not
 * recorded). A `GET /audit` writes the process's own pending entries first, so it sees them all.
 */
export async function expectAudited(m: Readonly<Model>, r: ModelSteward): Promise<void> {
  const entries: any[] = [];
  let token: string | null = null;
  do {
    const res: JsonResponse = await call(
      'GET',
      `${r.api}/audit?page_size=500${token ? `&page_token=${encodeURIComponent(token)}` : ''}`,
    );
    expect(res.status).toBe(200);
    entries.push(...res.body.entries);
    token = res.body.next_page_token;
  } while (token);
  const byId = new Map<string, any[]>();
  for (const entry of entries)
    byId.set(entry.request_id, [...(byId.get(entry.request_id) ?? []), entry]);
  const writes = writesOf(m);
  const sentIds = new Set(writes.map((w) => w.requestId));
  expect(entries.map((e) => e.request_id).filter((id) => !sentIds.has(id))).toEqual([]);
  for (const w of writes) {
    const status = w.res.status;
    expect({ id: w.requestId, entries: (byId.get(w.requestId) ?? []).map(auditFactsOf) }).toEqual({
      id: w.requestId,
      entries: [
        {
          method: w.method,
          status,
          outcome: status < 400 ? 'ok' : status < 500 ? 'refused' : 'failed',
          code: w.res.body?.error?.code ?? null,
          // A refused dry run is recorded as the refusal it was (src/api/auth/audit.ts): it was not answered as a dry run.
          dry_run: w.dryRun && status < 300,
        },
      ],
    });
  }
}

const auditFactsOf = ({ method, status, outcome, code, dry_run }: any) => ({
  method,
  status,
  outcome,
  code,
  dry_run,
});
