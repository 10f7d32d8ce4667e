#!/usr/bin/env bash
# The two jest passes of `npm test` at once: SQLite, and PostgreSQL (jest.postgres.config.js). Each
# pass is one jest worker (two cores here), so together they take about as long as the longer one.
# The PostgreSQL pass's output follows the SQLite pass's.
set -u
log=$(mktemp)
STEWARD_TEST_STORE=postgres NODE_OPTIONS=--experimental-vm-modules npx jest -c jest.postgres.config.js >"$log" 2>&1 &
postgres_pid=$!
NODE_OPTIONS=--experimental-vm-modules npx jest
sqlite=$?
wait "$postgres_pid"
postgres=$?
echo '--- the PostgreSQL pass ---'
cat "$log"
rm -f "$log"
exit $((sqlite || postgres))
