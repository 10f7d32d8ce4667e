#!/usr/bin/env bash
# The static checks of `npm test` (typecheck, build, lint, the Dockerfile's lint) at once, each
# printed whole after the others: tsc and eslint each keep one core busy, so on two cores the four
# together take about as long as lint alone, where one after another they took its time and
# typecheck's and build's. None writes what another reads (build writes dist/, which typecheck,
# eslint and prettier leave out). Exits non-zero if any failed, after all have been printed.
set -u
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
checks=(typecheck build lint lint:dockerfile)
pids=()
for check in "${checks[@]}"; do
  npm run -s "$check" >"$dir/$check.log" 2>&1 &
  pids+=($!)
done
failed=()
for i in "${!checks[@]}"; do
  wait "${pids[$i]}" || failed+=("${checks[$i]}")
  cat "$dir/${checks[$i]}.log"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "static checks failed: ${failed[*]}" >&2
  exit 1
fi
