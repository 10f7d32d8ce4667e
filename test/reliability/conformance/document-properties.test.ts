import fc from 'fast-check';

import { describeOneDialect } from '../../helpers/dialects.js';
import { call } from '../../helpers/harness.js';
import { answerChecker, type DocOperation, operationsOf, schemaValidator } from './document.js';
import { brokenRequests, type DocRequest, send, validRequests, type World } from './requests.js';
import type { Schema } from './schema-values.js';
import { type Stand, startStand } from './stand.js';

/**
 * The property-based pass driven by the OpenAPI document (issue 16): for each operation,
 * requests generated from its own parameter and body schemas, valid ones and ones broken in
 * one place, sent to a live Steward. Valid → a documented 2xx, or a documented 4xx with the
 * error JSON; broken → a documented 4xx; never a 5xx; every answer validates against the
 * schema documented for its status (ajv). An operation added to the document is walked
 * without a change here.
 */

const RUNS = Number(process.env.STEWARD_PROPERTY_RUNS ?? 10);
/** Fixed, so a failure replays; fast-check prints the seed and the counterexample. */
const SEED = Number(process.env.STEWARD_PROPERTY_SEED ?? 20261126);

describeOneDialect('sqlite', 'the OpenAPI document as properties of the live API', () => {
  let stand: Stand;
  let ops: DocOperation[];
  let world: World;
  let check: ReturnType<typeof answerChecker>;
  let invalid: (schema: Schema, value: unknown) => boolean;

  beforeAll(async () => {
    // No worker: what a request leaves behind stays as it is, so runs do not race the engine.
    stand = await startStand({ withTokens: false, config: { worker: false } });
    const { h, doc } = stand;
    const seed = await call('POST', `${h.api}/resources`, {
      kind: 'ledger',
      project: 'p',
      name: 'seed',
    });
    expect(seed.status).toBe(202);
    const schedule = await call('POST', `${h.api}/resources/${seed.body.resource.urn}/schedules`, {
      request: { action: 'retag', params: { tag: 'x' } },
      at: '2099-01-01T00:00:00Z',
    });
    expect(schedule.status).toBe(201);
    world = {
      urns: [seed.body.resource.urn],
      operationIds: [seed.body.operation.id],
      scheduleIds: [schedule.body.id],
    };
    ops = operationsOf(doc);
    check = answerChecker(doc);
    const validatorOf = schemaValidator(doc);
    invalid = (schema, value) => !validatorOf(schema)(value);
  });
  afterAll(() => stand?.close());

  const problemsOf = async (request: DocRequest) => {
    const answer = await send(stand.h.url, request);
    const problems = check(request.op, answer);
    if (answer.status >= 500) problems.push('a 5xx');
    if (request.broken !== undefined && (answer.status < 400 || answer.status >= 500))
      problems.push(`a broken request (${request.broken}) answered ${answer.status}`);
    if (answer.status >= 400 && answer.status < 500 && !(answer.body as { error?: unknown })?.error)
      problems.push('a 4xx without the error JSON');
    return { answer, problems };
  };

  it('walks every operation of the document', () => {
    expect(ops.length).toBeGreaterThanOrEqual(30);
    expect(ops.map((op) => op.id)).toEqual(
      expect.arrayContaining(['createResource', 'runRetagAction', 'healthz']),
    );
  });

  it('answers valid requests as documented, and never 5xx', async () => {
    const failures: string[] = [];
    for (const op of ops) {
      await fc.assert(
        fc.asyncProperty(validRequests(stand.doc, op, world), async (request) => {
          const { answer, problems } = await problemsOf(request);
          if (problems.length)
            failures.push(
              `${op.id} ${JSON.stringify({ ...request, op: undefined })} → ${answer.status} ${JSON.stringify(answer.body)?.slice(0, 300)}: ${problems.join('; ')}`,
            );
        }),
        { numRuns: RUNS, seed: SEED },
      );
    }
    expect(failures.slice(0, 10)).toEqual([]);
  });

  it('answers requests broken in one place with a documented 4xx', async () => {
    const failures: string[] = [];
    let walked = 0;
    for (const op of ops) {
      const broken = brokenRequests(stand.doc, op, world, invalid);
      if (!broken) continue;
      walked += 1;
      await fc.assert(
        fc.asyncProperty(broken, async (request) => {
          const { answer, problems } = await problemsOf(request);
          if (problems.length)
            failures.push(
              `${op.id} ${JSON.stringify({ ...request, op: undefined })} → ${answer.status} ${JSON.stringify(answer.body)?.slice(0, 300)}: ${problems.join('; ')}`,
            );
        }),
        { numRuns: RUNS, seed: SEED },
      );
    }
    expect(walked).toBeGreaterThanOrEqual(20);
    expect(failures.slice(0, 10)).toEqual([]);
  });
});
