import { describeEachDialect } from '../helpers/dialects.js';
import { createGate, type FakeSteward, startFakeSteward, urnOf } from '../helpers/fake-steward.js';
import { waitFor } from '../helpers/harness.js';
import { watch } from '../helpers/sse.js';

/** GET /metrics after real work: controller-runtime-style names, bounded labels, one registry per Steward. */

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parse(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not an exposition line: ${line}`);
      const labels: Record<string, string> = {};
      for (const [, key, value] of match[2]?.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g) ?? [])
        labels[key!] = value!;
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

function valueOf(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  return samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  )?.value;
}

async function scrape(
  url: string,
): Promise<{ text: string; samples: Sample[]; contentType: string | null; status: number }> {
  const res = await fetch(`${url}/metrics`);
  const text = await res.text();
  return {
    text,
    samples: parse(text),
    contentType: res.headers.get('content-type'),
    status: res.status,
  };
}

describeEachDialect('GET /metrics', () => {
  let s: FakeSteward;
  beforeAll(async () => {
    s = await startFakeSteward({ config: { maxAttempts: 2 }, kinds: [{ kind: 'other' }] });
  });
  afterAll(() => s.close());

  it('reports reconciles, the work queue, resources, HTTP requests and the process, with bounded labels', async () => {
    // Two that complete (one in two steps), one that fails once then completes, one that fails for good.
    await s.create('ok');
    await s.create('two-steps', { steps: 2 });
    await s.create('flaky');
    s.next(urnOf('flaky'), { type: 'throw', message: 'backend hiccup' });
    await s.create('broken', {}, { kind: 'other' });
    s.always(urnOf('broken', 'other'), { type: 'terminal', message: 'refused for good' });
    await s.drain();
    await s.create('waiting'); // due, not synced: the queue's depth
    await s.get(urnOf('ok'));
    await s.get(urnOf('does-not-exist'));
    await fetch(`${s.api}/no/such/route/orn:steward:fake:p:ok`);

    const { samples, text, contentType, status } = await scrape(s.h.url);
    expect(status).toBe(200);
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);

    expect(valueOf(samples, 'steward_reconcile_total', { kind: 'fake', result: 'completed' })).toBe(
      3,
    );
    expect(valueOf(samples, 'steward_reconcile_total', { kind: 'fake', result: 'step' })).toBe(1);
    expect(valueOf(samples, 'steward_reconcile_total', { kind: 'fake', result: 'retry' })).toBe(1);
    expect(valueOf(samples, 'steward_reconcile_total', { kind: 'other', result: 'failed' })).toBe(
      1,
    );
    expect(
      valueOf(samples, 'steward_reconcile_duration_seconds_count', {
        kind: 'fake',
        result: 'completed',
      }),
    ).toBe(3);
    expect(
      valueOf(samples, 'steward_reconcile_duration_seconds_bucket', {
        kind: 'fake',
        result: 'completed',
        le: '+Inf',
      }),
    ).toBe(3);
    expect(valueOf(samples, 'steward_workqueue_retries_total', { kind: 'fake' })).toBe(1);
    expect(valueOf(samples, 'steward_workqueue_claimed_total')).toBe(6);
    expect(valueOf(samples, 'steward_workqueue_queue_duration_seconds_count')).toBe(6);
    expect(valueOf(samples, 'steward_workqueue_depth')).toBe(1);
    expect(valueOf(samples, 'steward_active_workers')).toBe(0);
    expect(valueOf(samples, 'steward_max_concurrent_reconciles')).toBe(0); // this Steward runs no worker

    expect(valueOf(samples, 'steward_resources', { kind: 'fake', status: 'COMPLETED' })).toBe(3);
    expect(valueOf(samples, 'steward_resources', { kind: 'fake', status: 'PENDING' })).toBe(1);
    expect(valueOf(samples, 'steward_resources', { kind: 'fake', status: 'ERROR' })).toBe(0);
    expect(valueOf(samples, 'steward_resources', { kind: 'other', status: 'ERROR' })).toBe(1);

    expect(
      valueOf(samples, 'steward_http_requests_total', {
        method: 'POST',
        route: '/resources',
        code: '202',
      }),
    ).toBe(5);
    expect(
      valueOf(samples, 'steward_http_requests_total', {
        method: 'GET',
        route: '/resources/:urn',
        code: '200',
      }),
    ).toBe(1);
    expect(
      valueOf(samples, 'steward_http_requests_total', {
        method: 'GET',
        route: '/resources/:urn',
        code: '404',
      }),
    ).toBe(1);
    expect(
      valueOf(samples, 'steward_http_requests_total', {
        method: 'GET',
        route: 'unmatched',
        code: '404',
      }),
    ).toBe(1);
    expect(
      valueOf(samples, 'steward_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/resources',
      }),
    ).toBe(5);

    for (const name of [
      'process_cpu_user_seconds_total',
      'process_start_time_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(samples.some((sample) => sample.name === name)).toBe(true);
    }

    // No unbounded label: never a URN, never a raw path.
    const values = samples.flatMap((sample) => Object.values(sample.labels));
    expect(
      values.filter(
        (value) => value.includes('orn:') || value.includes('/api/') || value.includes('/no/such'),
      ),
    ).toEqual([]);
    expect(text).not.toContain('orn:');
  });

  it('counts open watches and the /metrics scrapes themselves', async () => {
    const stream = await watch(`${s.api}/events`);
    await waitFor(
      async () => valueOf((await scrape(s.h.url)).samples, 'steward_event_watches') === 1,
      'the watch to be counted',
    );
    stream.close();
    await waitFor(
      async () => valueOf((await scrape(s.h.url)).samples, 'steward_event_watches') === 0,
      'the watch to end',
    );
    const { samples } = await scrape(s.h.url);
    expect(
      valueOf(samples, 'steward_http_requests_total', {
        method: 'GET',
        route: '/metrics',
        code: '200',
      }),
    ).toBeGreaterThanOrEqual(2);
    expect(
      valueOf(samples, 'steward_http_requests_total', {
        method: 'GET',
        route: '/events',
        code: '200',
      }),
    ).toBe(1);
  });
});

describeEachDialect('GET /metrics with a running worker', () => {
  it('reports active workers while syncs run, and keeps each Steward in its own registry', async () => {
    const a = await startFakeSteward({ config: { worker: true, workerConcurrency: 3 } });
    const b = await startFakeSteward();
    try {
      const gate = createGate();
      a.next(urnOf('slow'), gate.behaviour);
      await a.create('slow');
      await waitFor(
        async () => valueOf((await scrape(a.h.url)).samples, 'steward_active_workers') === 1,
        'a sync to be running',
      );
      const { samples } = await scrape(a.h.url);
      expect(valueOf(samples, 'steward_max_concurrent_reconciles')).toBe(3);
      gate.release();
      await waitFor(
        async () =>
          valueOf((await scrape(a.h.url)).samples, 'steward_reconcile_total', {
            kind: 'fake',
            result: 'completed',
          }) === 1,
        'the sync to complete',
      );

      // The other Steward in this process counted nothing of it.
      const other = (await scrape(b.h.url)).samples;
      expect(
        valueOf(other, 'steward_reconcile_total', { kind: 'fake', result: 'completed' }),
      ).toBeUndefined();
      expect(
        valueOf(other, 'steward_http_requests_total', {
          method: 'POST',
          route: '/resources',
          code: '202',
        }),
      ).toBeUndefined();
    } finally {
      await a.close();
      await b.close();
    }
  });
});
