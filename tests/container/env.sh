# shellcheck shell=bash
# Sourced by the other scripts here: points podman and buildah at this folder's settings and
# names the images and caches they share.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export CONTAINERS_CONF="$here/containers.conf"
export CONTAINERS_STORAGE_CONF="$here/storage.conf"
# The debootstrap root file system is cached here so that reruns skip the slow part.
export MCP_REPLAY_ROOTFS="${MCP_REPLAY_ROOTFS:-/var/tmp/mcp-replay-rootfs}"
# The stand-in for the Dockerfile's FROM image, and the image the tests build.
export MCP_REPLAY_BASE_IMAGE="${MCP_REPLAY_BASE_IMAGE:-docker.io/library/python:3.12-slim}"
export MCP_REPLAY_IMAGE="${MCP_REPLAY_IMAGE:-localhost/mcp-replay-action:dev}"
repo_root=$(cd "$here/../.." && pwd)
export repo_root
