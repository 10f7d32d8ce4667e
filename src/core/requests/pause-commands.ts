import { NotFoundError } from '../errors.js';
import { newOperationId } from '../ids.js';
import type { Operation, Resource } from '../model.js';
import type { Registry } from '../modules/registry.js';
import { parseUrn } from '../names.js';
import type { AcceptWrites, ResourceReads } from '../ports.js';
import { eventFor } from './documents.js';
import { assertTransition } from './transitions.js';
import { operationView, publicConfigs, resourceView } from './views.js';

export interface PauseDeps {
  store: Pick<ResourceReads, 'findResource'> & Pick<AcceptWrites, 'commitPause'>;
  registry: Registry;
  clock: () => Date;
}

/** What pause and resume answer: `operation` only when the flag changed (an audit record, already succeeded). */
export interface PauseAnswer {
  resource: Resource;
  operation?: Operation;
}

/** The flag lost a race this often before the request gives up and answers what it reads. */
const MAX_ATTEMPTS = 6;

/**
 * `POST /resources/{urn}/pause` and `/resume` (docs/design.md §11). They flip `state.paused` and
 * nothing else: the status, version and current operation stay, so work in flight or accepted
 * meanwhile is not disturbed; a paused row is only skipped by the claim. Each flip is audited by
 * its own operation, written already succeeded (who and when), a revision of the same version
 * whose one change is `/state/paused`, and an event. Asking for the state the resource is already
 * in answers it as is and writes nothing, so a retried request is harmless.
 */
export function createPauseCommands({ store, registry, clock }: PauseDeps) {
  async function setPaused(urn: string, paused: boolean, actor: string): Promise<PauseAnswer> {
    parseUrn(urn);
    for (let attempt = 1; ; attempt += 1) {
      const current = await store.findResource(urn);
      if (!current) throw new NotFoundError(`resource ${urn} does not exist`, { urn });
      assertTransition(paused ? 'pause' : 'resume', current.state.status, urn);
      if (current.state.paused === paused || attempt > MAX_ATTEMPTS)
        return { resource: resourceView(current, registry) };
      const now = clock();
      const iso = now.toISOString();
      const action = paused ? 'pause' : 'resume';
      const operation: Operation = {
        id: newOperationId(now.getTime()),
        urn,
        action,
        params: {},
        status: 'succeeded',
        version: current.version,
        attempts: 0,
        error: null,
        created_at: iso,
        started_at: iso,
        finished_at: iso,
        created_by: actor,
      };
      const outcome = await store.commitPause({
        urn,
        paused,
        operation,
        revision: {
          version: current.version,
          action,
          operation_id: operation.id,
          labels: current.labels,
          configs: publicConfigs(current.spec.configs, registry, current.kind),
          dependencies: current.spec.dependencies,
          changes: [{ path: '/state/paused', from: !paused, to: paused }],
          created_at: iso,
          created_by: actor,
        },
        events: [
          eventFor(current, paused ? 'resource.paused' : 'resource.resumed', operation.id, {
            version: current.version,
          }),
        ],
      });
      // 'conflict': another request flipped it first; read again, and answer that state.
      if (outcome === 'conflict') continue;
      const resource: Resource = {
        ...current,
        updated_at: iso,
        updated_by: actor,
        state: { ...current.state, paused },
      };
      return {
        resource: resourceView(resource, registry),
        operation: operationView(operation, registry),
      };
    }
  }

  return {
    pause: (urn: string, actor: string) => setPaused(urn, true, actor),
    resume: (urn: string, actor: string) => setPaused(urn, false, actor),
  };
}

export type PauseCommands = ReturnType<typeof createPauseCommands>;
