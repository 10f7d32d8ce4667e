#!/usr/bin/env bash
# npm run test:container: builds the Dockerfile as a user would, runs the image, and proves it works:
# the image's settings, `migrate`, `serve` as non-root under tini answering /readyz and its HEALTHCHECK,
# a resource reaching COMPLETED, an online backup, a clean exit on SIGTERM within docker stop's 10 s,
# and the data surviving on the volume into a new, read-only container. Takes minutes the first time;
# not part of `npm test`. docs/operations.md, "The container test".
#
#   npm run test:container [-- --rebuild-base]
#
# Runs podman as root (debootstrap needs root too). Missing tools are installed with apt-get when it
# can, or named. Without network access to image registries, the base image is a local stand-in
# (scripts/container-stand-in.sh); a real node:20-bookworm-slim already stored under that name wins.
set -euo pipefail
cd "$(dirname "$0")/.."

case ${1:-} in
  '') rebuild_base= ;;
  --rebuild-base) rebuild_base=1 ;;
  *) echo "usage: scripts/test-container.sh [--rebuild-base]" >&2; exit 2 ;;
esac
image=localhost/steward:container-test
work=${STEWARD_CT_WORK:-/tmp/steward-container-test}
volume=steward-ct-data-$$
first=steward-ct-first-$$
second=steward-ct-second-$$
stop_timeout_s=10 # docker stop's default
t0=$SECONDS

now_ms() { date +%s%3N; }
step() { printf '\n== %s [%ss]\n' "$*" "$((SECONDS - t0))"; }
ok() { printf '   ok  %s\n' "$*"; }
fail() {
  printf '   FAIL  %s\n' "$*" >&2
  for name in "$first" "$second"; do
    if podman container exists "$name" 2>/dev/null; then
      printf '\n-- last log lines of %s\n' "$name" >&2
      podman logs --tail 40 "$name" >&2 || true
    fi
  done
  exit 1
}
cleanup() {
  podman rm -f --time 0 "$first" "$second" >/dev/null 2>&1 || true
  podman volume rm -f "$volume" >/dev/null 2>&1 || true
}

# ---- tools ----------------------------------------------------------------------------------------
step "tools"
if [[ $(id -u) != 0 ]]; then
  echo "run as root: podman runs rootful here and debootstrap needs root (sudo npm run test:container)" >&2
  exit 2
fi
missing=()
for tool in podman runc debootstrap curl; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if ((${#missing[@]})); then
  if command -v apt-get >/dev/null; then
    echo "   installing ${missing[*]} with apt-get"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "install these first: ${missing[*]} (Debian: apt-get install podman runc debootstrap curl)" >&2
    exit 2
  fi
fi
mkdir -p "$work"
if [[ -z ${CONTAINERS_CONF:-} ]]; then
  # runc, not crun (crun fails on some hosts' cgroups and rlimits); explicit limits for the same reason.
  export CONTAINERS_CONF=$work/containers.conf
  cat >"$CONTAINERS_CONF" <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]

[engine]
runtime = "runc"
EOF
fi
runc_version=$(runc --version)
ok "$(podman --version), ${runc_version%%$'\n'*}, CONTAINERS_CONF=$CONTAINERS_CONF"
trap cleanup EXIT
trap 'exit 130' INT TERM
# Podman schedules health checks with systemd timers; on a host without systemd, run, stop and rm say
# they cannot. The test runs the HEALTHCHECK itself (podman healthcheck run), so that noise is dropped.
podman() { command podman "$@" 2> >(grep -v 'unable to get systemd connection' >&2); }

# ---- base image -----------------------------------------------------------------------------------
step "base image"
base=$(awk 'toupper($1) == "FROM" { print $2; exit }' Dockerfile)
case $base in
  */*/*) ;;
  */*) base=docker.io/$base ;;
  *) base=docker.io/library/$base ;;
esac
scripts/container-stand-in.sh "$base" ${rebuild_base:+--rebuild}

# ---- build ----------------------------------------------------------------------------------------
step "podman build --pull=never --format docker -t $image . (full log: $work/build.log)"
build_start=$SECONDS
if ! podman build --pull=never --format docker -t "$image" . 2>&1 | tee "$work/build.log" | grep --line-buffered -E '^(\[[0-9]+/[0-9]+\] )?STEP [0-9]+/|^--> Using cache'; then
  tail -30 "$work/build.log" >&2
  fail "the image did not build"
fi
grep -q '^Successfully tagged' "$work/build.log" || fail "the image did not build"
ok "built in $((SECONDS - build_start)) s, $(podman image inspect --format '{{.Size}}' "$image" | awk '{ printf "%.0f MB", $1 / 1e6 }')"

# ---- the image's settings -------------------------------------------------------------------------
step "image settings"
expect_config() {
  local got
  got=$(podman image inspect --format "$2" "$image")
  [[ $got == "$3" ]] || fail "$1: expected $3, got $got"
  ok "$1: $got"
}
expect_config user '{{.Config.User}}' node
expect_config entrypoint '{{json .Config.Entrypoint}}' '["/usr/bin/tini","-s","--","node","dist/src/cli.js"]'
expect_config cmd '{{json .Config.Cmd}}' '["serve"]'
expect_config volumes '{{json .Config.Volumes}}' '{"/data":{}}'
expect_config 'exposed ports' '{{json .Config.ExposedPorts}}' '{"8080/tcp":{}}'
expect_config 'stop signal' '{{.Config.StopSignal}}' SIGTERM
expect_config healthcheck '{{index .Config.Healthcheck.Test 0}}' CMD
image_env=$(podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$image")
for env in STEWARD_DB=/data/steward.db STEWARD_HOST=0.0.0.0; do
  grep -qx "$env" <<<"$image_env" || fail "env $env is not set"
  ok "env $env"
done

# ---- helpers for the API --------------------------------------------------------------------------
# json PATH: prints the value at PATH (dot-separated) of the JSON document on stdin.
json() {
  node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
    const v = process.argv[1].split(".").reduce((o, k) => (o == null ? undefined : o[k]), JSON.parse(s));
    process.stdout.write(typeof v === "string" ? v : JSON.stringify(v ?? null)); });' "$1"
}
# wait_until SECONDS WHAT COMMAND...: runs COMMAND every 0.25 s until it succeeds.
wait_until() {
  local limit=$1 what=$2
  local deadline=$((SECONDS + limit))
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "$what did not happen within $limit s"
    sleep 0.25
  done
}
ready() { curl -fsS --max-time 2 "$api_root/readyz"; }
completed() { [[ $(curl -fsS --max-time 2 "$api/resources/$urn" | json state.status) == COMPLETED ]]; }
# start_serve NAME [PODMAN RUN OPTIONS...]
start_serve() {
  podman run -d --name "$1" "${@:2}" -v "$volume:/data" -p 127.0.0.1::8080 "$image" >/dev/null || fail "podman run $1"
  local published
  published=$(podman port "$1" 8080/tcp)
  api_root=http://${published%%$'\n'*}
  api=$api_root/api/v1beta1
  local started
  started=$(now_ms)
  wait_until 60 "/readyz answering 200" ready
  ok "$1: /readyz answers 200 $(($(now_ms) - started)) ms after podman run returned: $(ready)"
}
# stop_cleanly NAME: podman stop (the image's STOPSIGNAL, then SIGKILL after 10 s), expecting exit 0 in time.
stop_cleanly() {
  local started code logs
  started=$(now_ms)
  podman stop --time "$stop_timeout_s" "$1" >/dev/null
  code=$(podman inspect --format '{{.State.ExitCode}}' "$1")
  [[ $code == 0 ]] || fail "$1 exited with $code on SIGTERM (137 means it was killed after ${stop_timeout_s} s)"
  logs=$(podman logs "$1" 2>&1)
  grep -q '"message":"shutting down".*"signal":"SIGTERM"' <<<"$logs" || fail "$1 did not log its SIGTERM shutdown"
  grep -q '"message":"steward stopped"' <<<"$logs" || fail "$1 did not log 'steward stopped'"
  ok "$1: SIGTERM -> 'shutting down' ... 'steward stopped', exit code 0 after $(($(now_ms) - started)) ms (SIGKILL at ${stop_timeout_s} s)"
}

# ---- migrate, serve, health ----------------------------------------------------------------------
step "migrate on a new volume"
podman volume create "$volume" >/dev/null
out=$(podman run --rm -v "$volume:/data" "$image" migrate 2>&1) || fail "migrate: $out"
migrated=$(grep '"message":"database migrated"' <<<"$out") || fail "migrate did not report: $out"
ok "podman run $image migrate: $(json db <<<"$migrated") migrated"

step "serve"
start_serve "$first"
ok "listening on $api_root"
processes=$(podman top "$first" pid user args | tail -n +2)
awk '$1 == 1 && $2 == "node" && $3 == "/usr/bin/tini" { found = 1 } END { exit !found }' <<<"$processes" || fail "PID 1 is not tini as node: $processes"
awk '$2 != "node" { exit 1 }' <<<"$processes" || fail "a process runs as another user than node: $processes"
ok "every process runs as node, tini is PID 1:"
sed 's/^/         /' <<<"$processes"
health=$(podman healthcheck run "$first" 2>&1) || fail "HEALTHCHECK: $health"
ok "HEALTHCHECK (node fetch /healthz): ${health:-healthy}"

# ---- a resource through the API -------------------------------------------------------------------
step "create a file resource and wait for COMPLETED"
urn=orn:steward:file:ct:motd
content="written by the container test $$"
created=$(curl -fsS -X POST "$api/resources" -H 'content-type: application/json' \
  -d "{\"kind\":\"file\",\"project\":\"ct\",\"name\":\"motd\",\"spec\":{\"configs\":{\"path\":\"etc/motd\",\"content\":\"$content\"}}}") ||
  fail "POST /resources"
ok "POST /resources: 202, operation $(json operation.id <<<"$created")"
wait_until 30 "$urn reaching COMPLETED" completed
ok "$urn is COMPLETED"
on_disk=$(podman exec "$first" cat /data/files/etc/motd) || fail "no /data/files/etc/motd in the container"
[[ $on_disk == "$content" ]] || fail "the file holds '$on_disk'"
ok "/data/files/etc/motd holds the content, owned by $(podman exec "$first" stat -c %U:%G /data/files/etc/motd)"

step "online backup (VACUUM INTO, as docs/operations.md says)"
podman exec "$first" node -e "require('better-sqlite3')('/data/steward.db', { fileMustExist: true }).exec(\"VACUUM INTO '/data/backup.db'\")" ||
  fail "VACUUM INTO"
checked=$(podman exec "$first" node -e "const db = require('better-sqlite3')('/data/backup.db', { readonly: true, fileMustExist: true });
  console.log(db.pragma('integrity_check', { simple: true }), db.prepare('select count(*) as n from resources').get().n)") || fail "reading the backup"
[[ $checked == 'ok 1' ]] || fail "the backup: integrity_check and resource count are '$checked'"
ok "/data/backup.db taken while serving: integrity_check ok, 1 resource"

# ---- SIGTERM --------------------------------------------------------------------------------------
step "podman stop (SIGTERM)"
stop_cleanly "$first"

# ---- a new container on the same volume -----------------------------------------------------------
step "a new container on the same volume, with a read-only root file system"
start_serve "$second" --read-only
got=$(curl -fsS "$api/resources/$urn") || fail "GET $urn after the restart"
[[ $(json state.status <<<"$got") == COMPLETED && $(json version <<<"$got") == 1 ]] || fail "after the restart: $got"
ok "$urn is still there: status $(json state.status <<<"$got"), version $(json version <<<"$got")"
ops=$(curl -fsS "$api/operations?urn=$urn" | json operations.0.status)
[[ $ops == succeeded ]] || fail "its create operation is '$ops'"
ok "its create operation is still recorded: $ops"
[[ $(podman exec "$second" cat /data/files/etc/motd) == "$content" ]] || fail "the file is gone"
ok "/data/files/etc/motd is still there"
stop_cleanly "$second"

step "passed in $((SECONDS - t0)) s"
