import { sleep } from './stats.js';

/** What the proof's client was told: acknowledged URNs, and how many answers it had to retry. */
export interface Creator {
  acknowledged: Set<string>;
  refused: number;
  done: Promise<void>;
}

/** POSTs every resource, `post-concurrency` at a time; a 503 or a refused connection is retried, as a client would. */
export function createAll(
  api: string,
  o: { resources: number; steps: number; 'max-delay-ms': number; 'post-concurrency': number },
): Creator {
  const acknowledged = new Set<string>();
  const state: Creator = { acknowledged, refused: 0, done: Promise.resolve() };
  let next = 0;
  const runner = async () => {
    while (next < o.resources) {
      const name = `r${String(next++).padStart(6, '0')}`;
      for (let retried = false; ; retried = true) {
        const res = await post(`${api}/resources`, {
          kind: 'ledger',
          project: 'scale',
          name,
          spec: { configs: { steps: o.steps, max_delay_ms: o['max-delay-ms'] } },
        });
        if (res.status === 202) {
          acknowledged.add((res.body as { resource: { urn: string } }).resource.urn);
          break;
        }
        if (res.status === 409 && retried) break; // an earlier attempt committed but its answer was lost
        if (res.status !== 503 && res.status !== 0)
          throw new Error(`POST ${name} answered ${res.status}: ${JSON.stringify(res.body)}`);
        state.refused += 1;
        await sleep(250);
      }
    }
  };
  state.done = Promise.all(Array.from({ length: o['post-concurrency'] }, runner)).then(
    () => undefined,
  );
  return state;
}

export async function post(url: string, body: unknown): Promise<{ status: number; body: unknown }> {
  return send(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

export async function get(url: string): Promise<{ status: number; body: unknown }> {
  return send(url, { method: 'GET' });
}

/** fetch, with a refused connection reported as status 0. */
async function send(url: string, init: RequestInit): Promise<{ status: number; body: unknown }> {
  try {
    const res = await fetch(url, init);
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  } catch (err) {
    return { status: 0, body: (err as Error).message };
  }
}
