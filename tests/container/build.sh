#!/usr/bin/env bash
# Builds the repository's real Dockerfile with Docker's layering semantics (one layer per
# instruction, as `docker build` makes them; buildah's --layers), so that the image measured here
# is the image users pull.
#   docker: `docker build` as is; the digest-pinned base is pulled.
#   podman: buildah with chroot isolation, never pulling. No registry can be reached, so the FROM
#     lines' pinned python image is replaced by the stand-in make-base.sh made (a copy of the
#     Dockerfile that differs in the FROM lines only), and this machine's CA bundle reaches pip
#     through the Dockerfile's PIP_CERT build argument.
set -euo pipefail
# shellcheck source=tests/container/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

if [[ "$MCP_REPLAY_ENGINE" == docker ]]; then
    exec docker build -f "$repo_root/Dockerfile" -t "$MCP_REPLAY_IMAGE" "$repo_root"
fi

dockerfile=$(mktemp /tmp/mcp-replay-Dockerfile.XXXXXX)
trap 'rm -f "$dockerfile"' EXIT
buildable_dockerfile "$dockerfile"
ca_args=()
ca=${MCP_REPLAY_HOST_CA:-/etc/ssl/certs/ca-certificates.crt}
if [[ -f "$ca" ]]; then
    ca_args=(-v "$ca:/host-ca.crt:ro" --build-arg PIP_CERT=/host-ca.crt)
fi
buildah bud --isolation chroot --pull=never --layers "${ca_args[@]}" \
    -f "$dockerfile" -t "$MCP_REPLAY_IMAGE" "$repo_root"
