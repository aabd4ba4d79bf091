#!/usr/bin/env bash
# Build the local base image the container tests and examples use (FROM lines are remapped to it
# with --image-map), from a debootstrap'd Debian bookworm. Idempotent: does nothing when the image
# already exists (pass --force to rebuild). Needs root, debootstrap and a container CLI.
#
#   scripts/build-base-image.sh [--force] [--include PKG,PKG] [IMAGE]   (default IMAGE: localhost/skillworks-base)
#
# --include adds Debian packages to the debootstrap (e.g. python3 for localhost/skillworks-python, the
# image of the integrity tests' attacks that need an interpreter).
#
# Environment: SKILLWORKS_CONTAINER_CLI (podman|docker, default: podman if present, else docker),
#              SKILLWORKS_CONTAINER_GLOBAL_FLAGS (flags before every runtime sub-command),
#              DEBIAN_MIRROR (default http://deb.debian.org/debian), DEBIAN_SUITE (default bookworm).
set -euo pipefail

force=0
include=""
while [[ "${1:-}" == --* ]]; do
  case "$1" in
    --force) force=1; shift ;;
    --include) include="${2:?--include needs a package list}"; shift 2 ;;
    *) echo "error: unknown option $1" >&2; exit 2 ;;
  esac
done
image="${1:-localhost/skillworks-base}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
suite="${DEBIAN_SUITE:-bookworm}"

cli="${SKILLWORKS_CONTAINER_CLI:-}"
if [[ -z "$cli" ]]; then
  if command -v podman >/dev/null 2>&1; then cli=podman; else cli=docker; fi
fi
command -v "$cli" >/dev/null 2>&1 || { echo "error: container CLI '$cli' not found" >&2; exit 2; }
read -r -a gflags <<< "${SKILLWORKS_CONTAINER_GLOBAL_FLAGS:-}"
runtime=("$cli" "${gflags[@]}")
command -v debootstrap >/dev/null 2>&1 || { echo "error: debootstrap not found (apt-get install debootstrap)" >&2; exit 2; }

if [[ "$force" -eq 0 ]] && "${runtime[@]}" image inspect "$image" >/dev/null 2>&1; then
  echo "$image already exists (use --force to rebuild)"
  exit 0
fi

rootfs="$(mktemp -d "${TMPDIR:-/tmp}/skillworks-base.XXXXXX")"
cleanup() { rm -rf --one-file-system "$rootfs"; }
trap cleanup EXIT

echo "debootstrap $suite from $mirror into $rootfs" >&2
debootstrap --variant=minbase ${include:+--include="$include"} "$suite" "$rootfs" "$mirror" >"$rootfs.log" 2>&1 || {
  echo "error: debootstrap failed; last lines of $rootfs.log:" >&2
  tail -n 20 "$rootfs.log" >&2
  exit 1
}
rm -f "$rootfs.log"
# Keep the image small and reproducible-ish: no apt lists or caches.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb

tar -C "$rootfs" --numeric-owner -c . |
  "${runtime[@]}" import --change 'CMD ["/bin/bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$image" >/dev/null
echo "built $image"
