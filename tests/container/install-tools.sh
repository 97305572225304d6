#!/usr/bin/env bash
# Installs the container tools from Debian's archive (needs root). Idempotent.
set -euo pipefail
needed=()
for tool in podman buildah runc debootstrap; do
    command -v "$tool" >/dev/null 2>&1 || needed+=("$tool")
done
if ((${#needed[@]})); then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman buildah runc debootstrap fuse-overlayfs
fi
