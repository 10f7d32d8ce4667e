#!/usr/bin/env bash
# The two jest passes of `npm test`, SQLite (jest.config.js) and PostgreSQL (jest.postgres.config.js),
# as the two projects of one jest run on two workers (jest.passes.config.js): a worker that finishes
# a file takes the next of either pass, so the run ends when the work of both does, not when the
# longer pass does. Two workers, as the two one-worker passes had: a third made timing-bound suites
# fail (docs/decisions.md). Each result line names its pass (PASS sqlite …, PASS postgres …).
set -u
NODE_OPTIONS=--experimental-vm-modules exec npx jest -c jest.passes.config.js --maxWorkers=2
