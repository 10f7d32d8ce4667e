import { readFileSync, statSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';

import { describeOneDialect } from '../../helpers/dialects.js';
import { call, type JsonResponse, waitFor } from '../../helpers/harness.js';
import { soak } from '../../helpers/soak.js';
import { runAutocannon } from './autocannon.js';
import { createLoadMix, fileCreateBody, type LoadMix, type RequestType } from './mix.js';
import { type LoadSteward, startLoadSteward } from './steward.js';

/**
 * Load (issue 6): autocannon holds 200 connections of mixed reads and writes (GET,
 * list, create, PATCH, actions) against `steward serve` in a child process on a SQLite
 * file, with the built-in `file` module doing real writes. No answer is other than the
 * 200/202 expected (writes go only to resources the client has seen COMPLETED, so no
 * 409 is expected either), no acknowledged write is lost, and everything converges.
 * Throughput and p50/p99 per request type are printed, not asserted.
 */
const API_PATH = '/api/v1beta1';
const PROJECT = 'load';
const CONNECTIONS = 200;
/**
 * Creates are kept few: each is two sync steps, and a worker that falls behind on creates leaves the
 * PATCHes and actions no COMPLETED resource to go to (they wait in the same due-order queue).
 */
const WEIGHTS: Record<RequestType, number> = {
  get: 45,
  list: 10,
  create: 5,
  patch: 25,
  action: 15,
};

/** Creates `count` file resources (20 at a time) and waits until all are COMPLETED. */
async function seed(api: string, count: number) {
  const writable: Parameters<typeof createLoadMix>[0]['writable'][number][] = [];
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const name = `w-${(next += 1)}`;
      const { body } = fileCreateBody(PROJECT, name);
      const res = await call('POST', `${api}/resources`, body).catch((err: Error) => {
        throw new Error(`POST /resources of ${name} failed: ${err.message} (${String(err.cause)})`);
      });
      expect(res.status).toBe(202);
      const configs = res.body.resource.spec.configs;
      writable.push({
        urn: res.body.resource.urn,
        path: configs.path,
        content: configs.content,
        mode: configs.mode,
        version: 1,
        operationId: res.body.operation.id,
      });
    }
  };
  await Promise.all(Array.from({ length: 20 }, lane));
  await waitFor(async () => (await pending(api)) === 0, 'the seeded resources to complete', 60_000);
  return writable;
}

async function pending(api: string): Promise<number> {
  const res = await call('GET', `${api}/resources?project=${PROJECT}&status=PENDING&page_size=1`);
  expect(res.status).toBe(200);
  return res.body.resources.length;
}

async function listAll(api: string): Promise<Map<string, any>> {
  const all = new Map<string, any>();
  let token: string | null = null;
  do {
    const res: JsonResponse = await call(
      'GET',
      `${api}/resources?project=${PROJECT}&page_size=500${token ? `&page_token=${token}` : ''}`,
    );
    expect(res.status).toBe(200);
    for (const resource of res.body.resources) all.set(resource.urn, resource);
    token = res.body.next_page_token;
  } while (token);
  return all;
}

/** Every acknowledged write against the final state; an empty list when none was lost. */
function lostWrites(mix: LoadMix, final: Map<string, any>): string[] {
  const lost: string[] = [];
  for (const created of mix.created) {
    const configs = final.get(created.urn)?.spec.configs;
    if (!configs) lost.push(`acknowledged create of ${created.urn} is missing`);
    else if (configs.content !== created.content || configs.mode !== created.mode)
      lost.push(
        `${created.urn} has ${JSON.stringify(configs)}, created with ${created.content} ${created.mode}`,
      );
  }
  for (const w of mix.written.values()) {
    const resource = final.get(w.urn);
    if (!resource) {
      lost.push(`${w.urn} is missing`);
      continue;
    }
    const newest = Math.max(...w.acknowledged);
    if (newest > resource.version)
      lost.push(
        `${w.urn}: version ${newest} was acknowledged, the final version is ${resource.version}`,
      );
    // The last acknowledged write is there; a write still out when the load stopped may also have been applied
    // (a PATCH or chmod then moved the version once more; an unanswered touch looks like the acknowledged state).
    const got = {
      content: resource.spec.configs.content,
      mode: resource.spec.configs.mode,
      version: resource.version,
    };
    const allowed = [
      { content: w.content, mode: w.mode, version: w.version },
      ...(w.unanswered ? [{ ...w.unanswered, version: w.version + 1 }] : []),
    ];
    if (
      !allowed.some(
        (a) => a.content === got.content && a.mode === got.mode && a.version === got.version,
      )
    ) {
      lost.push(
        `${w.urn}: final ${JSON.stringify(got)}, expected one of ${JSON.stringify(allowed)}`,
      );
    }
  }
  return lost;
}

/** Each resource COMPLETED at its version, and its file on disk holding its configs. */
function unconverged(final: Map<string, any>, fileRoot: string): string[] {
  const wrong: string[] = [];
  for (const r of final.values()) {
    const { status, observed_version: observed, sync } = r.state;
    if (status !== 'COMPLETED' || observed !== r.version || sync.last_error !== null) {
      wrong.push(
        `${r.urn}: ${status} at version ${r.version}, observed ${observed}, last_error ${sync.last_error}`,
      );
      continue;
    }
    const file = join(fileRoot, r.project as string, r.state.output.path as string); // the output's path is relative to the project's directory
    const onDisk = {
      content: readFileSync(file, 'utf8'),
      mode: `0${(statSync(file).mode & 0o777).toString(8)}`,
    };
    const wanted = { content: r.spec.configs.content, mode: r.spec.configs.mode };
    if (onDisk.content !== wanted.content || onDisk.mode !== wanted.mode)
      wrong.push(`${r.urn}: file ${JSON.stringify(onDisk)}, configs ${JSON.stringify(wanted)}`);
  }
  return wrong;
}

describeOneDialect('sqlite', 'load', () => {
  let steward: LoadSteward | undefined;
  afterEach(async () => {
    const stopping = steward;
    steward = undefined;
    if (!stopping) return;
    const code = await stopping.stop();
    // What the child said, should it have failed or crashed.
    if (code !== 0 || stopping.errors.length)
      console.log(
        `steward exited with ${code}; its errors:\n${stopping.errors.slice(0, 20).join('\n')}`,
      );
    expect(code).toBe(0);
  });

  it(
    `holds ${CONNECTIONS} connections of mixed reads and writes with no error answer and no lost write, then converges`,
    async () => {
      steward = await startLoadSteward();
      const writable = await seed(steward.api, soak(300, 1000));
      const mix = createLoadMix({
        apiPath: API_PATH,
        project: PROJECT,
        weights: WEIGHTS,
        writable,
        connections: CONNECTIONS,
      });
      const durationS = soak(8, 60);

      const result = await runAutocannon({
        url: steward.url,
        connections: CONNECTIONS,
        duration: durationS,
        timeout: 30,
        requests: [{ setupRequest: mix.setupRequest, onResponse: mix.onResponse }],
      });
      const loadEndedMs = Date.now();
      const phases = mix.phases();
      const untilCompleted = mix.untilCompleted();
      await waitFor(
        async () => (await pending(steward!.api)) === 0,
        'every resource to leave PENDING',
        soak(120_000, 600_000),
      );
      const convergedS = (Date.now() - loadEndedMs) / 1000;
      const final = await listAll(steward.api);

      const figures = mix.figures(result.duration);
      const acknowledged = (type: RequestType) =>
        figures.find((f) => f.type === type)!.statuses[202] ?? 0;
      const perType = figures
        .map(
          (f) =>
            `${f.type} ${f.count} (${f.perS.toFixed(0)}/s) p50 ${f.p50Ms.toFixed(1)} ms p99 ${f.p99Ms.toFixed(1)} ms`,
        )
        .join('; ');
      console.log(
        [
          `load: ${CONNECTIONS} connections for ${result.duration} s: ${result.requests.total} requests, ${(result.requests.total / result.duration).toFixed(0)}/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms (autocannon)`,
          `  per type (p50/p99 leave out each connection's first request, timed from before its connect): ${perType}`,
          `  acknowledged: ${acknowledged('create')} creates, ${acknowledged('patch')} PATCHes, ${acknowledged('action')} actions; ${final.size} resources COMPLETED ${convergedS.toFixed(1)} s after the load ended`,
          `  a write's 202 to the client seeing it COMPLETED: ${untilCompleted.count} seen, p50 ${untilCompleted.p50Ms.toFixed(0)} ms, p99 ${untilCompleted.p99Ms.toFixed(0)} ms; written resources at the end: ${JSON.stringify(phases)}`,
          `  steward log: ${steward.infoLines} info lines, ${steward.warnings.length} warnings, ${steward.errors.length} errors; machine: ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)}`,
        ].join('\n'),
      );

      expect({
        errors: result.errors,
        timeouts: result.timeouts,
        messages: result.errorMessages,
      }).toEqual({ errors: 0, timeouts: 0, messages: [] });
      expect(mix.unexpected).toEqual([]);
      expect(mix.problems).toEqual([]);
      // The run did what it claims: every type was sent and writes were acknowledged.
      for (const f of figures)
        expect({ type: f.type, sent: f.count > 0 }).toEqual({ type: f.type, sent: true });
      expect(acknowledged('create')).toBe(mix.created.length);
      expect(acknowledged('patch') + acknowledged('action')).toBeGreaterThan(0);
      expect(final.size).toBeGreaterThanOrEqual(writable.length + mix.created.length);
      expect(lostWrites(mix, final)).toEqual([]);
      expect(unconverged(final, steward.fileRoot)).toEqual([]);
      expect(steward.errors).toEqual([]);
    },
    soak(240_000, 1_200_000),
  );
});
