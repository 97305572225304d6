#!/usr/bin/env bash
# Installs the container tools from Debian's archive when the machine has no Docker engine (needs
# root). With an engine (GitHub's runners) nothing is installed: the tests use docker there.
# Idempotent.
set -euo pipefail
# shellcheck source=tests/container/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
if [[ "$MCP_REPLAY_ENGINE" == docker ]]; then
    echo "a Docker engine answers: the container tests use it, nothing to install"
    exit 0
fi
needed=()
# docker-registry: the local registry tests/test_release.py pushes a release to.
for tool in podman buildah runc debootstrap docker-registry; do
    command -v "$tool" >/dev/null 2>&1 || needed+=("$tool")
done
if ((${#needed[@]})); then
    if [[ "$(id -u)" != 0 ]]; then
        echo "no Docker engine, and installing ${needed[*]} needs root: the container tests will skip" >&2
        exit 0
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman buildah runc debootstrap fuse-overlayfs docker-registry
fi
