import { finish, type Model, type ModelResource, type Outcome } from './design.js';

/**
 * The sync loop in the model of docs/design.md §4 (model-design.ts): which resources a worker
 * claims (§6 due work), what each sync outcome writes (§5, and decisions.md on the two
 * attempt counters), and which write-backs of interrupted or frozen workers count
 * (§6 fencing).
 */

/** The sync call a worker makes: the module sees these. */
export interface ExpectedCall {
  urn: string;
  action: string;
  version: number;
  operationId: string;
}

/** Due work: PENDING, due now, and no lease that is still running. */
export function dueNow(model: Model): string[] {
  return [...model.resources]
    .filter(
      ([, r]) =>
        r.status === 'PENDING' &&
        r.dueAtMs !== null &&
        r.dueAtMs <= model.nowMs &&
        (r.leaseUntilMs ?? 0) <= model.nowMs,
    )
    .map(([urn]) => urn)
    .sort();
}

/** One worker round: every due resource is claimed (its operation starts running) and synced once with its next outcome. */
export function workerStep(model: Model): ExpectedCall[] {
  return dueNow(model).map((urn) => {
    const resource = model.resources.get(urn)!;
    const call = claim(model, resource, urn);
    written(model, urn, resource, model.scripts.get(urn)?.shift() ?? { type: 'ok' });
    return call;
  });
}

/**
 * A worker round whose syncs are still running when requests arrive: it claims every due
 * resource; `finishRound` then ends each sync with ok. A result is written only if the
 * resource is still PENDING with the operation it was claimed for (the write-back is
 * fenced); otherwise it is discarded and the lease released: the row is due at once if it
 * is due at all (decisions.md, "A delete that supersedes an in-flight sync").
 */
export function startRound(model: Model): ExpectedCall[] {
  return dueNow(model).map((urn) => claim(model, model.resources.get(urn)!, urn));
}

export function finishRound(model: Model, calls: readonly ExpectedCall[]): void {
  for (const { urn, operationId } of calls) {
    const resource = model.resources.get(urn)!;
    if (resource.status === 'PENDING' && resource.operation.id === operationId)
      written(model, urn, resource, { type: 'ok' });
    else released(model, resource);
  }
}

/** A sync call's outcome, written back. */
function written(model: Model, urn: string, resource: ModelResource, outcome: Outcome): void {
  resource.leaseUntilMs = null;
  resource.operation.attempts += 1;
  if (outcome.type === 'ok' || outcome.type === 'requeue') {
    // A step that went well: failures in a row start again from 0.
    Object.assign(resource, { failures: 0, lastError: null });
    if (outcome.type === 'requeue')
      resource.dueAtMs = model.nowMs + outcome.ms; // a wait, not a failure
    else if ((resource.remaining -= 1) > 0)
      resource.dueAtMs = model.nowMs; // PENDING: call sync again
    else succeed(model, urn, resource);
    return;
  }
  resource.failures += 1;
  if (outcome.type === 'terminal' || resource.failures >= model.maxAttempts) {
    finish(resource.operation, 'failed', outcome.message);
    Object.assign(resource, { status: 'ERROR', lastError: outcome.message, dueAtMs: null });
  } else {
    Object.assign(resource, { lastError: outcome.message, dueAtMs: model.nowMs }); // retried (this test runs without backoff)
  }
}

/**
 * A round cut short: the due resources are claimed and their syncs started, and then the
 * worker shuts down (`stopped`: the syncs are aborted and the leases released, so the rows
 * are due at once), dies (`killed`: its leases stay until they expire), or freezes (`frozen`:
 * like killed, but it may come back, see `thaw`). No result is written: the operations are
 * running, with no attempt counted.
 */
export function interruptedStep(
  model: Model,
  how: 'killed' | 'stopped' | 'frozen',
): ExpectedCall[] {
  const calls = dueNow(model).map((urn) => {
    const resource = model.resources.get(urn)!;
    const call = claim(model, resource, urn);
    resource.leaseUntilMs = how === 'stopped' ? null : model.nowMs + model.leaseMs;
    resource.dueAtMs = resource.leaseUntilMs ?? model.nowMs;
    return call;
  });
  if (how === 'frozen')
    model.frozen = calls.map(({ urn, operationId }) => ({
      urn,
      operationId,
      claim: model.resources.get(urn)!.claim,
    }));
  return calls;
}

/**
 * The frozen worker carries on, its syncs end with ok. Each write-back is fenced by the
 * claim it holds (docs/design.md §6): if another worker claimed the resource since, nothing is
 * written, not even the lease; otherwise the result is written if the resource is still
 * PENDING with the same operation, or discarded and the lease given back.
 */
export function thaw(model: Model): void {
  for (const { urn, operationId, claim } of model.frozen ?? []) {
    const resource = model.resources.get(urn);
    if (!resource || resource.claim !== claim) continue;
    if (resource.status === 'PENDING' && resource.operation.id === operationId)
      written(model, urn, resource, { type: 'ok' });
    else released(model, resource);
  }
  model.frozen = null;
}

/** A lease given back without a result: a row still due is due at once. */
function released(model: Model, resource: ModelResource): void {
  resource.leaseUntilMs = null;
  if (resource.dueAtMs !== null) resource.dueAtMs = model.nowMs;
}

function claim(model: Model, resource: ModelResource, urn: string): ExpectedCall {
  resource.claim = model.claims += 1;
  if (resource.operation.status === 'queued') resource.operation.status = 'running';
  return {
    urn,
    action: resource.action,
    version: resource.version,
    operationId: resource.operation.id,
  };
}

/** The sync completed: a delete removes the resource; anything else is COMPLETED at its version. */
function succeed(model: Model, urn: string, resource: ModelResource): void {
  finish(resource.operation, 'succeeded', null);
  if (resource.action === 'delete') model.resources.delete(urn);
  else
    Object.assign(resource, {
      status: 'COMPLETED',
      observedVersion: resource.version,
      dueAtMs: null,
    });
}
