#!/usr/bin/env sh
# npm run lint:dockerfile: dockerfile-utils lint, with its warnings counted as failures too
# (on its own it fails only on errors).
out=$(dockerfile-utils lint Dockerfile) && [ -z "$out" ] && exit 0
echo "$out"
echo "Dockerfile: dockerfile-utils lint reports the problems above" >&2
exit 1
