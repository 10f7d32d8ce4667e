#!/usr/bin/env bash
# The two jest passes of `npm test` at once: SQLite, and PostgreSQL (jest.postgres.config.js). Each
# pass is one jest process of one worker (two cores here), so together they take about as long as the
# longer one. The SQLite pass is the longer (every file, where the PostgreSQL pass has the store
# suites), so the suites in `moved` run their SQLite half after the PostgreSQL pass, in the second
# process, and the two processes end closer together (docs/decisions.md, "npm test's time, third
# round"; the fuzz pass joined the load suite in the fifth, when the SQLite pass was still 110 s the
# longer). Running them as projects of one jest run on two workers was tried:
# it put a heavy file beside its own copy of the other store, and two browser suites side by side.
# More workers with the heavy suites kept apart gained nothing: the machine is busy throughout, so
# only less CPU makes the run shorter ("npm test's time, fourth round").
# The PostgreSQL process's output follows the SQLite pass's.
set -u
moved=(test/reliability/load/ test/reliability/fuzz-api/)
log=$(mktemp)
(
  STEWARD_TEST_STORE=postgres NODE_OPTIONS=--experimental-vm-modules npx jest -c jest.postgres.config.js
  postgres=$?
  echo '--- the SQLite suites moved after the PostgreSQL pass ---'
  NODE_OPTIONS=--experimental-vm-modules npx jest "${moved[@]}"
  exit $((postgres || $?))
) >"$log" 2>&1 &
second_pid=$!
NODE_OPTIONS=--experimental-vm-modules npx jest --testPathIgnorePatterns /node_modules/ "${moved[@]}"
sqlite=$?
wait "$second_pid"
second=$?
echo '--- the PostgreSQL pass ---'
cat "$log"
rm -f "$log"
exit $((sqlite || second))
