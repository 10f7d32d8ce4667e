// `npm run test:soak`: the reliability suites with their long counts (STEWARD_SOAK=1, see test/helpers/soak.ts).
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/test/reliability/**/*.test.ts'],
  testTimeout: 30 * 60_000,
};
