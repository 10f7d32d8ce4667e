#!/usr/bin/env bash
# Makes a local stand-in for the Dockerfile's base image (node:20-bookworm-slim) on a machine
# that cannot pull images: Debian bookworm from debootstrap, plus this machine's node, npm and
# Node headers, tagged with the exact name the Dockerfile uses, so the Dockerfile itself is built
# unchanged. Cached: the stand-in is rebuilt only when this recipe, node, npm or the CA bundle
# change (or with --rebuild). A real image already stored under that name is used as it is.
#
#   scripts/container-stand-in.sh docker.io/library/node:20-bookworm-slim [--rebuild]
#
# Needs root (debootstrap), podman and debootstrap. Called by scripts/test-container.sh;
# docs/operations.md explains how the stand-in differs from the real image.
set -euo pipefail

base=${1:?usage: container-stand-in.sh IMAGE [--rebuild]}
rebuild=${2:-}
rootfs_image=localhost/steward-stand-in-rootfs:bookworm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
ca_bundle=${STAND_IN_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
label=org.steward.stand-in

node_bin=$(node -p process.execPath)
node_prefix=$(dirname "$(dirname "$node_bin")")
npm_dir=$(npm root -g 2>/dev/null)/npm
[[ -d $node_prefix/include/node && -d $npm_dir ]] || {
  echo "stand-in: need node's headers ($node_prefix/include/node) and npm ($npm_dir)" >&2
  exit 1
}
[[ -r $ca_bundle ]] || { echo "stand-in: no CA bundle at $ca_bundle (set STAND_IN_CA_BUNDLE)" >&2; exit 1; }

recipe=$({ cat "$0" "$ca_bundle"; node --version; npm --version 2>/dev/null; } | sha256sum | cut -c1-16)

if podman image exists "$base" && [[ $rebuild != --rebuild ]]; then
  found=$(podman image inspect --format "{{ index .Labels \"$label\" }}" "$base")
  if [[ -z $found || $found == '<no value>' ]]; then
    echo "base: $base is stored and is not a stand-in: using it as it is"
    exit 0
  fi
  if [[ $found == "$recipe" ]]; then
    echo "base: stand-in $base is cached (recipe $recipe)"
    exit 0
  fi
  echo "base: stand-in $base is from an older recipe ($found): rebuilding"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! podman image exists "$rootfs_image" || [[ $rebuild == --rebuild ]]; then
  echo "base: debootstrap --variant=minbase bookworm from $mirror (about 30 s)"
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
    tail -20 "$work/debootstrap.log" >&2
    exit 1
  }
  # Like the real slim image: no package lists or caches, apt sources for bookworm, -updates and -security.
  rm -rf "$work"/rootfs/var/lib/apt/lists/* "$work"/rootfs/var/cache/apt/*.bin "$work"/rootfs/var/cache/apt/archives/*.deb
  rm -f "$work/rootfs/etc/apt/sources.list"
  cat >"$work/rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  tar --numeric-owner -C "$work/rootfs" -c . | podman import --quiet --change 'CMD ["bash"]' - "$rootfs_image" >/dev/null
  rm -rf "$work/rootfs"
  echo "base: imported $rootfs_image"
fi

# The build context of the stand-in: this machine's node, npm, headers and CA bundle.
ctx=$work/context
mkdir -p "$ctx"
cp "$node_bin" "$ctx/node"
cp -a "$npm_dir" "$ctx/npm"
cp -a "$node_prefix/include/node" "$ctx/include-node"
cp "$ca_bundle" "$ctx/ca-certificates.crt"
# npm as configured on this machine, as far as the build needs it: the CA file and a registry other than the default.
{
  echo "cafile=/usr/local/share/steward-stand-in/ca-certificates.crt"
  registry=$(npm config get registry 2>/dev/null)
  [[ $registry == https://registry.npmjs.org/ ]] || echo "registry=$registry"
} >"$ctx/npmrc"

cat >"$ctx/Containerfile" <<EOF
FROM $rootfs_image
# What node:20-bookworm-slim provides: the node user (uid 1000), node and npm under /usr/local, the headers.
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY include-node /usr/local/include/node
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && node --version && npm --version
# Only in the stand-in: this machine's CA bundle (TLS to the registry is intercepted here), its npm
# settings, and node-gyp pointed at the headers above (nodejs.org, where node-gyp fetches them, is not reachable).
COPY ca-certificates.crt /usr/local/share/steward-stand-in/ca-certificates.crt
COPY npmrc /usr/local/etc/npmrc
ENV NODE_VERSION=$(node --version | cut -c2-) \\
    NODE_EXTRA_CA_CERTS=/usr/local/share/steward-stand-in/ca-certificates.crt \\
    npm_config_nodedir=/usr/local
LABEL $label=$recipe
CMD ["node"]
EOF

echo "base: building the stand-in $base (node $(node --version), npm $(npm --version 2>/dev/null))"
podman build --pull=never --format docker --quiet -t "$base" "$ctx" >/dev/null
echo "base: stand-in $base ready (recipe $recipe)"
