import { performance } from 'node:perf_hooks';

import { percentile } from '../../helpers/ledger.js';
import type { CannonContext, CannonRequest } from './autocannon.js';

export const REQUEST_TYPES = ['get', 'list', 'create', 'patch', 'action'] as const;
export type RequestType = (typeof REQUEST_TYPES)[number];

/** A `file` resource the load writes to, as the client knows it from Steward's answers. */
export interface WrittenResource {
  urn: string;
  path: string;
  /** configs.content and configs.mode as of the last acknowledged write. */
  content: string;
  mode: string;
  /** The version that write answered with. */
  version: number;
  operationId: string;
  /** Every version a write was acknowledged with, in order. */
  acknowledged: number[];
  /**
   * free: seen COMPLETED since its last acknowledged write, so a write now cannot meet a 409;
   * writing: a write is out; syncing: acknowledged and not yet seen COMPLETED; failed: a write was refused.
   */
  phase: 'free' | 'writing' | 'syncing' | 'failed';
  /** The write that was out when the load stopped: Steward may or may not have applied it. */
  unanswered?: { content: string; mode: string };
  /** When the last write was acknowledged (performance.now()). */
  acknowledgedAtMs?: number;
}

export interface CreatedResource {
  urn: string;
  content: string;
  mode: string;
}

export interface TypeFigures {
  type: RequestType;
  count: number;
  perS: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<number, number>;
}

export interface LoadMixOptions {
  /** '/api/v1beta1' */
  apiPath: string;
  project: string;
  /** Relative weights of the request types. */
  weights: Record<RequestType, number>;
  /** autocannon's connections: the first request of each, timed from before its connect, is left out of p50/p99. */
  connections: number;
  /** COMPLETED resources that PATCHes and actions go to (creates are only read afterwards). */
  writable: ReadonlyArray<Omit<WrittenResource, 'acknowledged' | 'phase' | 'unanswered'>>;
}

/** The create body of `file` resource `name`, its content its own name. */
export function fileCreateBody(
  project: string,
  name: string,
): { body: string; created: Omit<CreatedResource, 'urn'> } {
  const configs = { path: `${project}/${name}`, content: `created ${name}`, mode: '0644' };
  return {
    body: JSON.stringify({ kind: 'file', project, name, spec: { configs, dependencies: {} } }),
    created: { content: configs.content, mode: configs.mode },
  };
}

/**
 * The request mix for autocannon, and the client's record of what Steward acknowledged.
 * Each request picks its type by weight. A PATCH or an action goes only to a resource the
 * client has seen COMPLETED since its last acknowledged write, so no 409 is expected; when
 * none is free, the request becomes a GET of one still syncing (how a client waits).
 * Every answer is timed from `setupRequest` (just before it is sent) to `onResponse`.
 */
export function createLoadMix(options: LoadMixOptions) {
  const { apiPath, project, weights } = options;
  const written = new Map<string, WrittenResource>(
    options.writable.map((w) => [w.urn, { ...w, acknowledged: [w.version], phase: 'free' }]),
  );
  const free: WrittenResource[] = [...written.values()];
  const syncing: WrittenResource[] = [];
  const created: CreatedResource[] = [];
  const readable: string[] = [...written.keys()];
  const latencies = Object.fromEntries(REQUEST_TYPES.map((t) => [t, [] as number[]])) as Record<
    RequestType,
    number[]
  >;
  const statuses = Object.fromEntries(
    REQUEST_TYPES.map((t) => [t, {} as Record<number, number>]),
  ) as Record<RequestType, Record<number, number>>;
  /** Answers other than the expected 200/202, and anything the answers contradict (first 50 of each). */
  const unexpected: string[] = [];
  const problems: string[] = [];
  /** From a write's 202 to the client seeing the resource COMPLETED at that operation. */
  const untilCompletedMs: number[] = [];
  let sequence = 0;
  let polls = 0;
  let setups = 0;
  const totalWeight = REQUEST_TYPES.reduce((sum, t) => sum + weights[t], 0);

  const note = (list: string[], text: string) => void (list.length < 50 && list.push(text));
  const randomOf = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;

  function pickType(): RequestType {
    let roll = Math.random() * totalWeight;
    for (const type of REQUEST_TYPES) {
      roll -= weights[type];
      if (roll < 0) return type;
    }
    return 'get';
  }

  function takeFree(): WrittenResource | undefined {
    if (free.length === 0) return undefined;
    const i = Math.floor(Math.random() * free.length);
    const [target] = free.splice(i, 1);
    return target;
  }

  function json(
    method: string,
    path: string,
    body?: unknown,
  ): Omit<CannonRequest, 'headers'> & { headers: Record<string, string> } {
    return body === undefined
      ? { method, path, headers: {}, body: undefined }
      : {
          method,
          path,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        };
  }

  function build(type: RequestType, ctx: CannonContext): CannonRequest {
    switch (type) {
      case 'get': {
        // Half the reads poll a resource that is syncing, so writers learn when it is free again.
        const polled =
          syncing.length > 0 && Math.random() < 0.5
            ? syncing[(polls += 1) % syncing.length]
            : undefined;
        const urn = polled?.urn ?? randomOf(readable);
        ctx.urn = urn;
        ctx.minVersion = written.get(urn)?.version ?? 1;
        return json('GET', `${apiPath}/resources/${urn}`);
      }
      case 'list':
        return json(
          'GET',
          `${apiPath}/resources?project=${project}&page_size=50${Math.random() < 0.5 ? '&status=COMPLETED' : ''}`,
        );
      case 'create': {
        const name = `c-${(sequence += 1)}`;
        const { body, created: expected } = fileCreateBody(project, name);
        Object.assign(ctx, { urn: `orn:steward:file:${project}:${name}`, ...expected });
        return {
          method: 'POST',
          path: `${apiPath}/resources`,
          headers: { 'content-type': 'application/json' },
          body,
        };
      }
      case 'patch':
      case 'action': {
        const target = ctx.target as WrittenResource;
        target.phase = 'writing';
        ctx.urn = target.urn;
        if (type === 'patch') {
          const content = `${target.urn} write ${(sequence += 1)}`;
          Object.assign(ctx, { content, mode: target.mode });
          target.unanswered = { content, mode: target.mode };
          return json('PATCH', `${apiPath}/resources/${target.urn}`, {
            spec: { configs: { path: target.path, content, mode: target.mode } },
          });
        }
        if (Math.random() < 0.3) {
          Object.assign(ctx, { content: target.content, mode: target.mode });
          target.unanswered = { content: target.content, mode: target.mode };
          return json('POST', `${apiPath}/resources/${target.urn}/actions/touch`);
        }
        const mode = target.mode === '0644' ? '0600' : '0644';
        Object.assign(ctx, { content: target.content, mode });
        target.unanswered = { content: target.content, mode };
        return json('POST', `${apiPath}/resources/${target.urn}/actions/chmod`, { mode });
      }
    }
  }

  function setupRequest(request: CannonRequest, ctx: CannonContext): CannonRequest {
    let type = pickType();
    if (type === 'patch' || type === 'action') {
      ctx.target = takeFree();
      if (!ctx.target) type = 'get';
    }
    ctx.type = type;
    // autocannon builds every connection's first request as it creates the connections, before any answer.
    ctx.first = (setups += 1) <= options.connections;
    const next = { ...request, ...build(type, ctx) };
    ctx.startedMs = performance.now();
    return next;
  }

  /** A resource seen COMPLETED at the operation of its last acknowledged write is free to be written again. */
  function seen(resource: {
    urn: string;
    version: number;
    state: { status: string; operation_id: string };
  }): void {
    const target = written.get(resource.urn);
    if (resource.state.status === 'ERROR') note(problems, `${resource.urn} is in ERROR`);
    if (
      !target ||
      target.phase !== 'syncing' ||
      resource.state.status !== 'COMPLETED' ||
      resource.state.operation_id !== target.operationId
    )
      return;
    target.phase = 'free';
    untilCompletedMs.push(performance.now() - target.acknowledgedAtMs!);
    syncing.splice(syncing.indexOf(target), 1);
    free.push(target);
  }

  function handle(type: RequestType, status: number, text: string, ctx: CannonContext): void {
    const expected = type === 'get' || type === 'list' ? 200 : 202;
    const target = ctx.target as WrittenResource | undefined;
    if (status !== expected) {
      note(unexpected, `${type} ${String(ctx.urn ?? '')}: ${status} ${text.slice(0, 300)}`);
      if (target) {
        // A refused write changed nothing (docs/design.md §8); the resource is left alone from now on.
        target.phase = 'failed';
        target.unanswered = undefined;
      }
      return;
    }
    const body = JSON.parse(text) as any;
    switch (type) {
      case 'get':
        if (body.version < (ctx.minVersion as number))
          note(
            problems,
            `GET ${body.urn} answered version ${body.version} after version ${String(ctx.minVersion)} was acknowledged`,
          );
        seen(body);
        return;
      case 'list':
        for (const resource of body.resources) seen(resource);
        return;
      case 'create':
        if (body.resource.urn !== ctx.urn)
          note(problems, `create of ${String(ctx.urn)} answered ${body.resource.urn}`);
        created.push({
          urn: ctx.urn as string,
          content: ctx.content as string,
          mode: ctx.mode as string,
        });
        readable.push(ctx.urn as string);
        return;
      case 'patch':
      case 'action': {
        const version = body.resource.version as number;
        // Only this client writes: a PATCH (new content) or chmod (the other mode) moves the version by one, a touch does not.
        const moved = ctx.content !== target!.content || ctx.mode !== target!.mode;
        if (version !== target!.version + (moved ? 1 : 0))
          note(
            problems,
            `${type} of ${target!.urn} answered version ${version} after ${target!.version}`,
          );
        Object.assign(target!, {
          content: ctx.content,
          mode: ctx.mode,
          version,
          operationId: body.operation.id,
          phase: 'syncing',
          unanswered: undefined,
          acknowledgedAtMs: performance.now(),
        });
        target!.acknowledged.push(version);
        syncing.push(target!);
      }
    }
  }

  function onResponse(status: number, text: string, ctx: CannonContext): void {
    const type = ctx.type as RequestType;
    if (!ctx.first) latencies[type].push(performance.now() - (ctx.startedMs as number));
    statuses[type][status] = (statuses[type][status] ?? 0) + 1;
    try {
      handle(type, status, text, ctx);
    } catch (err) {
      // Never throw into autocannon's socket handler: it would end the whole run.
      note(problems, `${type} ${String(ctx.urn ?? '')}: ${(err as Error).message}`);
    }
  }

  return {
    setupRequest,
    onResponse,
    written,
    created,
    unexpected,
    problems,
    /** Count, rate, p50 and p99 of each request type over `durationS`. */
    figures(durationS: number): TypeFigures[] {
      return REQUEST_TYPES.map((type) => {
        const count = Object.values(statuses[type]).reduce((sum, n) => sum + n, 0);
        return {
          type,
          count,
          perS: count / durationS,
          ...percentiles(latencies[type]),
          statuses: statuses[type],
        };
      });
    },
    /** p50/p99 from a write's 202 to the client seeing it COMPLETED, and how many were seen. */
    untilCompleted: () => ({ count: untilCompletedMs.length, ...percentiles(untilCompletedMs) }),
    /** How many written resources are in each phase now. */
    phases: () =>
      Object.fromEntries(
        ['free', 'writing', 'syncing', 'failed'].map((phase) => [
          phase,
          [...written.values()].filter((w) => w.phase === phase).length,
        ]),
      ),
  };
}

export type LoadMix = ReturnType<typeof createLoadMix>;

function percentiles(values: readonly number[]): { p50Ms: number; p99Ms: number } {
  return { p50Ms: percentile(values, 50), p99Ms: percentile(values, 99) };
}
