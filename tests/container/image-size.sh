#!/usr/bin/env bash
# Prints the size of the built image (podman's figure) and of its file system (du inside it).
set -euo pipefail
# shellcheck source=tests/container/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
podman image inspect --format '{{.Size}}' "$MCP_REPLAY_IMAGE" | awk '{printf "image: %.0f MB (%d bytes, podman image inspect)\n", $1/1e6, $1}'
podman run --rm --network none --entrypoint du "$MCP_REPLAY_IMAGE" -sxm / | awk '{print "file system: " $1 " MiB (du -sxm / inside the image)"}'
