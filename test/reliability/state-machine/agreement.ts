import { expectError } from '../../helpers/fake-steward.js';
import { call } from '../../helpers/harness.js';
import { ALLOWED_FROM, type Model, type ModelOperation, type ModelResource } from './design.js';
import { cronOf, type ModelSchedule } from './schedules.js';
import type { ModelSteward } from './steward.js';

/**
 * The check after every command of the state machine test: the real Steward, read
 * over HTTP, holds what the model holds — each resource (or its absence), each
 * operation ever accepted (with who made it: a schedule's firing or a caller), each
 * revision, and each schedule.
 */
export async function expectAgreement(
  m: Model,
  r: ModelSteward,
  urns: readonly string[],
): Promise<void> {
  expect(r.nowMs).toBe(m.nowMs);
  const [operations, schedules, ...perUrn] = await Promise.all([
    call('GET', `${r.api}/operations?page_size=500`),
    call('GET', `${r.api}/schedules?page_size=500`),
    ...urns.flatMap((urn) => [
      call('GET', `${r.api}/resources/${urn}`),
      call('GET', `${r.api}/resources/${urn}/revisions?page_size=500`),
      call('OPTIONS', `${r.api}/resources/${urn}`),
    ]),
  ]);
  urns.forEach((urn, i) => {
    const [res, revisions, options] = [perUrn[3 * i]!, perUrn[3 * i + 1]!, perUrn[3 * i + 2]!];
    // History outlives the resource: a revision on create and whenever the version moved, newest first.
    const history = m.revisions.filter((revision) => revision.urn === urn).reverse();
    if (history.length === 0) expectError(revisions, 404, 'not_found');
    else
      expect({ urn, revisions: revisions.body.revisions?.map(revisionFactsOf) }).toEqual({
        urn,
        revisions: history,
      });
    const resource = m.resources.get(urn);
    if (!resource) {
      expectError(options, 404, 'not_found');
      return expectError(res, 404, 'not_found');
    }
    // A read carries the caller's allowed_actions (an answer to a write does not).
    const { allowed_actions } = res.body;
    expect({
      urn,
      http: res.status,
      etag: res.headers.get('etag'),
      ...factsOf(res.body),
      allowed_actions,
      options: optionsFactsOf(options),
    }).toEqual({
      urn,
      http: 200,
      etag: `"${resource.version}"`,
      ...expectedFacts(resource),
      allowed_actions: expectedAllowed(resource),
      options: expectedOptions(resource),
    });
  });
  // Every operation ever accepted, newest first, and nothing else.
  expect(operations.status).toBe(200);
  expect(operations.body.operations.map(operationFactsOf)).toEqual(
    [...m.operations].reverse().map(expectedOperation),
  );
  // Every schedule the model holds, in the order they were made, and nothing else.
  expect(schedules.status).toBe(200);
  expect(schedules.body.schedules.map(scheduleFactsOf)).toEqual(
    [...m.schedules.values()].sort((a, b) => (a.id < b.id ? -1 : 1)).map(expectedSchedule),
  );
}

/** What the model knows of a schedule document. */
export const scheduleFactsOf = (s: any) => ({
  id: s.id,
  urn: s.urn,
  request: s.request,
  at: s.at,
  cron: s.cron,
  timezone: s.timezone,
  next_run_at: s.next_run_at,
  last_run_at: s.last_run_at,
  last_operation_id: s.last_operation_id,
  last_outcome: s.last_outcome,
  last_error: s.last_error,
  created_by: s.created_by,
});

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export const expectedSchedule = (s: ModelSchedule): ReturnType<typeof scheduleFactsOf> => ({
  id: s.id,
  urn: s.urn,
  request: s.request,
  at: isoOrNull(s.atMs),
  cron: s.everyMinutes === null ? null : cronOf(s.everyMinutes),
  timezone: s.timezone,
  next_run_at: isoOrNull(s.nextRunAtMs),
  last_run_at: isoOrNull(s.lastRunAtMs),
  last_operation_id: s.lastOperationId,
  last_outcome: s.lastOutcome,
  last_error: phrase(s.lastError),
  created_by: 'anonymous',
});

/** What the model knows of a resource document. */
export function factsOf(body: any) {
  const { state } = body;
  return {
    status: state.status,
    action: state.action,
    version: body.version,
    observed_version: state.observed_version,
    operation_id: state.operation_id,
    attempts: state.sync.attempts,
    last_error: state.sync.last_error,
    configs: body.spec.configs,
    labels: body.labels,
    data: state.data,
    // What the fake module published last (the value it synced or observed).
    output: state.output.value,
    paused: state.paused,
    drift: state.drift && {
      exists: state.drift.exists,
      fields: state.drift.fields,
      error: state.drift.error,
    },
  };
}

/** The order `allowed_actions` lists the requests in (docs/api.md#allowed-actions); the module's actions follow. */
const LISTED = ['update', 'delete', 'orphan', 'retry', 'cancel', 'refresh', 'pause', 'resume'];

/** What the anonymous caller (an admin) may ask now: the model's table, one of pause and resume, then `bump`. */
function expectedAllowed(r: ModelResource): string[] {
  const from = ALLOWED_FROM[r.status];
  const requests = LISTED.filter(
    (request) =>
      from.includes(request) &&
      !(request === 'pause' && r.paused) &&
      !(request === 'resume' && !r.paused),
  );
  return from.includes('action') ? [...requests, 'bump'] : requests;
}

/** What OPTIONS answers (docs/api.md): the methods the allowed actions open, the version, the same actions. */
const optionsFactsOf = (res: any) => ({
  http: res.status,
  allow: res.headers.get('allow'),
  etag: res.headers.get('etag'),
  status: res.body?.status,
  allowed_actions: res.body?.allowed_actions,
});

function expectedOptions(r: ModelResource): ReturnType<typeof optionsFactsOf> {
  const allowed = expectedAllowed(r);
  const methods = ['GET', 'HEAD', 'OPTIONS'];
  if (allowed.includes('update')) methods.push('PUT', 'PATCH');
  if (allowed.includes('delete') || allowed.includes('orphan')) methods.push('DELETE');
  return {
    http: 200,
    allow: methods.join(', '),
    etag: `"${r.version}"`,
    status: r.status,
    allowed_actions: allowed,
  };
}

export function expectedFacts(r: ModelResource): ReturnType<typeof factsOf> {
  return {
    status: r.status,
    action: r.action,
    version: r.version,
    observed_version: r.observedVersion,
    operation_id: r.operation.id,
    attempts: r.failures,
    last_error: phrase(r.lastError),
    configs: r.configs,
    labels: r.labels,
    data: r.remaining === null ? null : { remaining: r.remaining },
    output: r.output,
    paused: r.paused,
    drift: r.drift && { exists: r.drift.exists, fields: {}, error: phrase(r.drift.error) },
  };
}

export const operationFactsOf = (op: any) => ({
  id: op.id,
  urn: op.urn,
  action: op.action,
  params: op.params,
  version: op.version,
  status: op.status,
  attempts: op.attempts,
  error: op.error,
  createdBy: op.created_by,
});

export const expectedOperation = (op: ModelOperation) => ({ ...op, error: phrase(op.error) });

const revisionFactsOf = ({ urn, version, action, operation_id }: any) => ({
  urn,
  version,
  action,
  operation_id,
});

/** The model knows a phrase of an error message, not all of it. */
const phrase = (text: string | null): unknown =>
  text === null ? null : expect.stringContaining(text);
