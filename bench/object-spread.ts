/**
 * What building an object costs on this Node, for the forms Steward's hot paths choose between
 * (docs/decisions.md, "Hot objects built without a spread"). On Node 20 (V8 11.3) an object
 * literal that adds properties after a spread (`{ ...lease, outcome, status }`) costs about half a
 * microsecond a property, where `Object.assign({}, lease, { outcome, status })` or a literal with
 * the spread last costs tens of nanoseconds; a spread followed only by properties the source
 * already has stays fast. Run it again after a Node upgrade: if the first line is no longer far
 * above the others, the workaround can go.
 *
 *   npm run -s build && node dist/bench/object-spread.js
 */
const lease = {
  urn: 'orn:steward:noop:bench:r-1',
  leaseToken: 1,
  operationId: 'op_1',
  claimedStatus: 'PENDING',
};

const forms: Record<string, (source: typeof lease) => object> = {
  'spread, then five new properties': (source) => ({
    ...source,
    outcome: 'completed',
    status: 'COMPLETED',
    attempts: 0,
    lastError: null,
    nextSyncAtMs: null,
  }),
  'Object.assign({}, source, five new properties)': (source) =>
    Object.assign({}, source, {
      outcome: 'completed',
      status: 'COMPLETED',
      attempts: 0,
      lastError: null,
      nextSyncAtMs: null,
    }),
  'five new properties, then the spread': (source) => ({
    outcome: 'completed',
    status: 'COMPLETED',
    attempts: 0,
    lastError: null,
    nextSyncAtMs: null,
    ...source,
  }),
  'spread, then two properties it already has': (source) => ({
    ...source,
    leaseToken: 2,
    claimedStatus: 'COMPLETED',
  }),
};

const CALLS = 500_000;
let sink: object | undefined;
const results: Array<[string, number]> = [];
for (const [name, build] of Object.entries(forms)) {
  let best = Infinity;
  for (let round = 0; round < 5; round += 1) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i += 1) sink = build(lease);
    best = Math.min(best, Number(process.hrtime.bigint() - started) / CALLS);
  }
  results.push([name, best]);
}
if (sink === undefined) throw new Error('nothing built');
const assign = results.find(([name]) => name.startsWith('Object.assign'))![1];
console.log(
  `Node ${process.version}, V8 ${process.versions.v8}; best of 5 rounds of ${CALLS} builds`,
);
for (const [name, ns] of results)
  console.log(
    `${ns.toFixed(0).padStart(6)} ns  ${(ns / assign).toFixed(1).padStart(5)}× Object.assign  ${name}`,
  );
