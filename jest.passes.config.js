// `npm test`'s jest run (scripts/test-passes.sh): the SQLite pass (jest.config.js) and the PostgreSQL
// pass (jest.postgres.config.js) as two projects of one run on two workers, so both workers take
// the next file of either pass until both are done. Run as two jest processes of one worker each,
// one pass's last ten minutes had one core to itself while the other sat idle.
import base from './jest.config.js';
import postgres from './jest.postgres.config.js';

const { reporters, testTimeout, ...project } = base;

export default {
  reporters,
  testTimeout,
  projects: [
    { ...project, displayName: 'sqlite' },
    {
      ...project,
      displayName: 'postgres',
      testMatch: postgres.testMatch,
      setupFiles: ['<rootDir>/test/postgres-pass.ts'],
    },
  ],
};
