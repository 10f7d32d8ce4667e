import {
  AlreadyExistsError,
  InvalidRequestError,
  InvalidStateError,
  PreconditionFailedError,
} from '../errors.js';
import { jsonEqual } from '../json.js';
import type { Resource } from '../model.js';
import type { Registry } from '../modules/registry.js';
import { parseUrn } from '../names.js';
import type { ResourceReads } from '../ports.js';
import { checkIfMatch } from './accept-change.js';
import type { Accepted, CreateRequest, RequestOptions, UpdateRequest } from './command-types.js';
import { policyOf } from './observe-requests.js';
import { keepOmittedSecrets, validatedConfigs } from './planning.js';
import type { ResourceCommands } from './resource-commands.js';
import { resourceView } from './views.js';

/** What an apply did: made the resource, changed it, or found it as asked. */
export type ApplyOutcome = 'created' | 'updated' | 'unchanged';

export interface Applied {
  outcome: ApplyOutcome;
  /** `created` and `updated`: what the create or the update accepted (a dry run's review included). */
  accepted?: Accepted;
  /** The resource: as accepted, or (`unchanged`) as stored; redacted. */
  resource: Resource;
}

export interface ApplyDeps {
  /** The sealing store: secrets opened, so the "anything to change?" comparison is on values. */
  store: Pick<ResourceReads, 'findResource'>;
  registry: Registry;
  /** The commands as the API gets them (with the request limits): apply is a create or an update. */
  commands: Pick<ResourceCommands, 'create' | 'update'>;
}

/**
 * A read that saw the resource, then lost to a concurrent write before its own was committed, looks
 * this often in all before answering 409 (only when the caller gave no If-Match: with one, the 412 is
 * the answer).
 */
const MAX_ATTEMPTS = 4;

/**
 * PUT /resources/{urn} (docs/design.md §13, `kubectl apply`): the body is the whole desired resource.
 * Missing → the create command; present → the update command with every part given (so a part left
 * out goes back to its default), unless the spec and labels already are what the body asks: then
 * nothing is written (no operation, no revision). The comparison is on the spec as the store holds
 * it: configs with the schema's defaults filled in (and, as PATCH does, a `writeOnly` config left
 * out keeps its stored value, since no read ever shows it); when plan reshapes what it is given, a
 * dry run of the update decides.
 */
export function createApplyCommand({ store, registry, commands }: ApplyDeps) {
  async function apply(
    urn: string,
    request: CreateRequest,
    options: RequestOptions,
  ): Promise<Applied> {
    assertSameIdentity(urn, request);
    for (let attempt = 1; ; attempt += 1) {
      const current = await store.findResource(urn);
      if (!current) {
        const created = await createOrLoseRace(urn, request, options, attempt);
        if (created) return created;
        continue;
      }
      checkIfMatch(current, options.ifMatch);
      if (sameAsStored(current, request))
        return { outcome: 'unchanged', resource: resourceView(current, registry) };
      try {
        return await updateTo(current, request, options);
      } catch (err) {
        // Our own pin lost to a concurrent write: read again and decide again. The caller's If-Match,
        // when given, was checked against what we read, so its 412 stands.
        if (!(err instanceof PreconditionFailedError) || typeof options.ifMatch === 'number')
          throw err;
        if (attempt >= MAX_ATTEMPTS)
          throw new InvalidStateError(
            `resource ${urn} is changing under concurrent requests; try again`,
            { urn },
          );
      }
    }
  }

  /**
   * The update to exactly the body, pinned to the version read (so a concurrent change is a 412 the
   * caller above reads again on). A dry run first: when plan makes of the body what is stored, the
   * version does not move, and nothing is written.
   */
  async function updateTo(
    current: Resource,
    request: CreateRequest,
    options: RequestOptions,
  ): Promise<Applied> {
    const pinned = { ...options, ifMatch: current.version };
    const update = wholeUpdate(request);
    const review = await commands.update(current.urn, update, { ...pinned, dryRun: true });
    if (review.resource.version === current.version)
      return { outcome: 'unchanged', resource: resourceView(current, registry) };
    if (options.dryRun) return { outcome: 'updated', accepted: review, resource: review.resource };
    const accepted = await commands.update(current.urn, update, pinned);
    return { outcome: 'updated', accepted, resource: accepted.resource };
  }

  /**
   * The resource is missing: If-Match names a representation that is not there (RFC 9110 §13.1.1,
   * even `*`), so 412. A create that meets a concurrent create of the same URN is tried once more
   * as an update (undefined: look again): apply means "make it so", whoever made it first.
   */
  async function createOrLoseRace(
    urn: string,
    request: CreateRequest,
    options: RequestOptions,
    attempt: number,
  ): Promise<Applied | undefined> {
    if (options.ifMatch !== undefined)
      throw new PreconditionFailedError(`resource ${urn} does not exist`, { urn });
    try {
      const accepted = await commands.create(request, options);
      return { outcome: 'created', accepted, resource: accepted.resource };
    } catch (err) {
      if (err instanceof AlreadyExistsError && attempt === 1 && (await store.findResource(urn)))
        return undefined;
      throw err;
    }
  }

  /** The body's spec and labels, as the store would hold them, equal the stored ones (no plan asked). */
  function sameAsStored(current: Resource, request: CreateRequest): boolean {
    const module = registry.get(current.kind);
    const configs = validatedConfigs(
      module,
      keepOmittedSecrets(module, current.spec.configs, request.configs ?? {}),
    );
    const spec = {
      configs,
      dependencies: request.dependencies ?? {},
      policy: policyOf(request.policy),
    };
    return jsonEqual(current.spec, spec) && jsonEqual(current.labels, request.labels ?? {});
  }

  return { apply };
}

export type ApplyCommand = ReturnType<typeof createApplyCommand>;

/** Every part given, so each replaces the stored one: exactly this spec. */
function wholeUpdate(request: CreateRequest): UpdateRequest {
  return {
    labels: request.labels ?? {},
    configs: request.configs ?? {},
    dependencies: request.dependencies ?? {},
    policy: request.policy ?? {},
  };
}

/**
 * The body names the resource as the URN does: kind, project (or the flat form's parent) and name
 * are required in it (it is the create body) and must agree, else a 400 naming the field.
 */
function assertSameIdentity(urn: string, request: CreateRequest): void {
  const id = parseUrn(urn);
  const problems = (['kind', 'project', 'name'] as const)
    .filter((field) => request[field] !== id[field])
    .map((field) => ({
      path: `/${field}`,
      message: `is "${request[field]}" but the URN names "${id[field]}"`,
    }));
  if (problems.length)
    throw new InvalidRequestError(
      `the body names another resource than ${urn}: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
      { problems },
    );
}
