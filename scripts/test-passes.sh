#!/usr/bin/env bash
# `npm test` after the build: the two jest passes (SQLite, and PostgreSQL: jest.postgres.config.js) and
# the static checks (typecheck, lint, the Dockerfile's lint) at once. Each pass is one jest worker and
# the checks one process; the passes spend much of their time waiting on child processes, servers and
# sleeps (1.3 of the two cores busy on average in a full run), so the checks fit beside them instead of
# three minutes before them. The outputs follow one another: SQLite, PostgreSQL, the checks.
set -u
postgres_log=$(mktemp)
checks_log=$(mktemp)
STEWARD_TEST_STORE=postgres NODE_OPTIONS=--experimental-vm-modules npx jest -c jest.postgres.config.js >"$postgres_log" 2>&1 &
postgres_pid=$!
(npm run -s typecheck && npm run -s lint && npm run -s lint:dockerfile) >"$checks_log" 2>&1 &
checks_pid=$!
NODE_OPTIONS=--experimental-vm-modules npx jest
sqlite=$?
wait "$postgres_pid"
postgres=$?
wait "$checks_pid"
checks=$?
echo '--- the PostgreSQL pass ---'
cat "$postgres_log"
echo "--- typecheck, lint, lint:dockerfile (exit $checks) ---"
cat "$checks_log"
rm -f "$postgres_log" "$checks_log"
exit $((sqlite || postgres || checks))
