#!/usr/bin/env bash
# Builds the repository's real Dockerfile with buildah, the way CONTAINERS.md shows: chroot
# isolation (no Docker engine, no user namespaces needed), the stand-in base image (never pull),
# and this machine's CA bundle handed to pip through the Dockerfile's PIP_CERT build argument.
set -euo pipefail
# shellcheck source=tests/container/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

ca_args=()
ca=${MCP_REPLAY_HOST_CA:-/etc/ssl/certs/ca-certificates.crt}
if [[ -f "$ca" ]]; then
    ca_args=(-v "$ca:/host-ca.crt:ro" --build-arg PIP_CERT=/host-ca.crt)
fi
buildah bud --isolation chroot --pull=never --layers=false "${ca_args[@]}" \
    -f "$repo_root/Dockerfile" -t "$MCP_REPLAY_IMAGE" "$repo_root"
