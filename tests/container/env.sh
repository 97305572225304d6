# shellcheck shell=bash
# Sourced by the other scripts here: picks the container engine, points podman and buildah at this
# folder's settings and names the images and caches they share.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export CONTAINERS_CONF="$here/containers.conf"
export CONTAINERS_STORAGE_CONF="$here/storage.conf"
# docker where an engine answers (GitHub's runners: a non-root user in the docker group, the real
# base image pulled by digest); otherwise podman/buildah as root with a stand-in base (this kind of
# machine, and the project's own CI). MCP_REPLAY_ENGINE=docker|podman overrides the choice.
if [[ -z "${MCP_REPLAY_ENGINE:-}" ]]; then
    if command -v docker >/dev/null 2>&1 && timeout 20 docker info >/dev/null 2>&1; then
        MCP_REPLAY_ENGINE=docker
    else
        MCP_REPLAY_ENGINE=podman
    fi
fi
export MCP_REPLAY_ENGINE
# The debootstrap root file system is cached here so that reruns skip the slow part.
export MCP_REPLAY_ROOTFS="${MCP_REPLAY_ROOTFS:-/var/tmp/mcp-replay-rootfs}"
# The stand-in for the Dockerfile's digest-pinned FROM image (podman only), and the image the tests build.
export MCP_REPLAY_BASE_IMAGE="${MCP_REPLAY_BASE_IMAGE:-localhost/stand-in/python:3.12-slim}"
export MCP_REPLAY_IMAGE="${MCP_REPLAY_IMAGE:-localhost/mcp-replay-action:dev}"
repo_root=$(cd "$here/../.." && pwd)
export repo_root

# The image the Dockerfile's stages start from here: its digest-pinned FROM where the engine has
# it (docker pulls it), else the stand-in. build.sh and image-size.sh agree through this.
pinned_base() {
    awk '/^FROM /{print $2; exit}' "$repo_root/Dockerfile"
}
base_image() {
    local pinned
    pinned=$(pinned_base)
    if [[ "$MCP_REPLAY_ENGINE" == docker ]] || podman image exists "$pinned"; then
        echo "$pinned"
    else
        echo "$MCP_REPLAY_BASE_IMAGE"
    fi
}

# Writes the Dockerfile to build here to $1: the real one where its pinned base resolves, else a
# copy that differs only in its FROM lines, which name the stand-in.
buildable_dockerfile() {
    local base pinned
    base=$(base_image)
    pinned=$(pinned_base)
    sed "s|^FROM ${pinned}|FROM ${base}|" "$repo_root/Dockerfile" > "$1"
}
