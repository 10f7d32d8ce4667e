// The second pass of `npm test`: the suites that exercise the store, against PostgreSQL
// (STEWARD_TEST_STORE=postgres makes the harness create a database on a throwaway cluster).
import base from './jest.config.js';

const STORE_SUITES = [
  'seed-scenario',
  'transitions',
  'sync-failures',
  'dependencies',
  'preconditions',
  'bad-input',
  'listing',
  'workers',
  'secrets',
  'secrets-at-rest',
  'secrets-at-rest-search',
  'drift-resync',
  'lease-renewal',
  'logs-endpoint',
  'events',
  'metrics',
  'access-control',
  'leaks',
  'secret-binding',
  'postgres-targets',
  'resource-claims',
  'file-confinement',
  'quotas',
  'http-hardening',
  'fair-claims',
  'deleted-history',
  'store-signals',
];

// The reliability suites (test/reliability) that also run on PostgreSQL.
const RELIABILITY_SUITES = ['database-faults', 'fuzz-api', 'crash-loop'];

export default {
  ...base,
  testMatch: [
    ...STORE_SUITES.map((name) => `<rootDir>/test/integration/${name}.test.ts`),
    ...RELIABILITY_SUITES.map((name) => `<rootDir>/test/reliability/${name}/${name}.test.ts`),
  ],
};
