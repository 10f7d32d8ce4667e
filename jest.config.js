/** Jest runs the TypeScript sources as ES modules (NODE_OPTIONS=--experimental-vm-modules). */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  testMatch: ['<rootDir>/test/**/*.test.ts', '<rootDir>/modules/**/*.test.ts'],
  testTimeout: 30000,
  reporters: ['default', '<rootDir>/test/summary-reporter.js'],
  // Before each test file's framework: see the file (an AsyncLocalStorage per test file otherwise piles up).
  setupFiles: ['<rootDir>/test/setup-async-storage.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/setup-store.ts'],
  // Each pass in a worker process that is replaced once a file leaves it above 400 MB, not in band:
  // jest's module registries pile up across files (2.1 GB resident by the SQLite pass's 91st file),
  // and the garbage collector's work grows with that heap: 8–18 % less CPU on 40 files with the
  // limit (docs/decisions.md, "npm test's time, fourth round").
  workerIdleMemoryLimit: '400MB',
};
