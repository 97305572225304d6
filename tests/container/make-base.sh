#!/usr/bin/env bash
# Makes a stand-in for the Dockerfile's FROM image (python:3.12-slim) when no registry can be
# reached: a Debian root file system from Debian's own archive, shaped like the official image
# (python and pip on /usr/local/bin, pip allowed to install system-wide), imported into podman
# and tagged with the FROM name. The root file system is cached in $MCP_REPLAY_ROOTFS.
set -euo pipefail
# shellcheck source=tests/container/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

rootfs="$MCP_REPLAY_ROOTFS/rootfs"
if [[ "$MCP_REPLAY_ENGINE" == docker ]]; then
    echo "docker pulls the pinned base itself"
    exit 0
fi
if podman image exists "$MCP_REPLAY_BASE_IMAGE"; then
    echo "base image $MCP_REPLAY_BASE_IMAGE already present"
    exit 0
fi
if [[ ! -f "$MCP_REPLAY_ROOTFS/rootfs.done" ]]; then
    mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    mirror=${mirror:-http://deb.debian.org/debian}
    rm -rf "$rootfs"
    mkdir -p "$MCP_REPLAY_ROOTFS"
    debootstrap --variant=minbase --include=python3,python3-pip,python3-venv,ca-certificates \
        bookworm "$rootfs" "$mirror"
    rm -f "$rootfs"/usr/lib/python3*/EXTERNALLY-MANAGED
    ln -sf /usr/bin/python3 "$rootfs/usr/local/bin/python"
    ln -sf /usr/bin/pip3 "$rootfs/usr/local/bin/pip"
    chroot "$rootfs" apt-get clean
    rm -rf "$rootfs"/var/lib/apt/lists/*
    touch "$MCP_REPLAY_ROOTFS/rootfs.done"
fi
tar -C "$rootfs" -c . | podman import - localhost/stand-in/python:3.12-slim
[[ "$MCP_REPLAY_BASE_IMAGE" == localhost/stand-in/python:3.12-slim ]] || podman tag localhost/stand-in/python:3.12-slim "$MCP_REPLAY_BASE_IMAGE"
