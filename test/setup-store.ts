import { appendFileSync, readFileSync } from 'node:fs';

import { stopTestDatabases } from './helpers/test-database.js';

// One PostgreSQL cluster per test file in the PostgreSQL pass; nothing to do on SQLite.
afterAll(() => stopTestDatabases());

// STEWARD_TEST_CPU_LOG=<file>: one JSON line per test file with the CPU it cost (the jest worker's
// own, and that of the children it waited for: Stewards, CLIs, browsers, PostgreSQL servers), for
// finding what makes `npm test` long on a machine that is busy throughout (docs/decisions.md). Read
// in this file's afterAll, which jest runs before the test file's own: children those stop (a
// PostgreSQL server a suite started itself) are not counted.
const cpuLog = process.env.STEWARD_TEST_CPU_LOG;
if (cpuLog) {
  const ticks = () => {
    // /proc/self/stat: fields 14–17 are utime, stime, cutime, cstime, in clock ticks (100 a second);
    // the fields start after the last ')', the command name (field 2) may hold one.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const at = (field: number) => Number(fields[field - 3]);
    return { own: at(14) + at(15), children: at(16) + at(17) };
  };
  // From here, before the test file's own imports are evaluated.
  const start = ticks();
  const startedAt = performance.now();
  afterAll(async () => {
    await stopTestDatabases();
    const end = ticks();
    appendFileSync(
      cpuLog,
      `${JSON.stringify({
        file: expect.getState().testPath,
        ownS: (end.own - start.own) / 100,
        childrenS: (end.children - start.children) / 100,
        wallS: (performance.now() - startedAt) / 1000,
      })}\n`,
    );
  });
}
