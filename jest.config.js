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
};
