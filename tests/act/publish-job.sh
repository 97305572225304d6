#!/usr/bin/env bash
# Runs the real .github/workflows/release.yml jobs `package` and `publish` through act for a pushed
# tag, up to and including the upload: the sdist and the wheel are built from this tree and
# checked by .github/release/build-package.sh (twine check, the tag's version, the wheel alone in
# a fresh venv runs `mcp-replay demo`), kept as an artifact, fetched by the publish job and
# uploaded to INDEX_URL, a local package index standing in for PyPI. act's host mode, no Docker.
#
# What differs from GitHub, and why (tests/test_release_package.py says the same):
#   - the image jobs `release` and `provenance` are left out of the copy of release.yml act runs,
#     and `publish` needs `package` alone: building and pushing the image needs buildah and a
#     registry (tests/act/release-job.sh runs every job, the container tests being opt-in); the
#     two jobs under test are otherwise the workflow's own lines;
#   - actions/setup-python, upload-artifact, download-artifact and pypa/gh-action-pypi-publish:
#     act is given the stand-ins beside this script (--local-repository, for the exact pins
#     release.yml uses); the publish stand-in uploads with twine, to 127.0.0.1 only, with no OIDC
#     exchange; actions/attest-build-provenance gets the never-run stand-in (its step is skipped
#     under act: signing needs GitHub's OIDC issuer); actions/checkout is act's own skip;
#   - PYPI_REPOSITORY_URL (the workflow's hook for this) names the local index.
#
# usage: publish-job.sh INDEX_URL VERSION [extra act options]   env: ACT (the act binary)
# VERSION must be pyproject.toml's: the package job refuses a tag that is not the package's.
set -euo pipefail
index=$1
version=$2
shift 2
act_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$act_dir/../.." && pwd)
act_bin=${ACT:-$(command -v act || echo "$repo_root/.venv/bin/act")}
workflow=.github/workflows/release.yml
work=$(mktemp -d /tmp/mcp-replay-publish-act.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The workflow without its image jobs: those blocks, from `  release:` to `  publish:`, and their
# names in publish's needs; every other line as release.yml has it.
awk '/^  release:$/ {skip=1} /^  publish:$/ {skip=0} !skip' "$repo_root/$workflow" \
    | sed 's/^    needs: \[package, release, provenance\]$/    needs: [package]/' > "$work/release.yml"
grep -q '^  package:$' "$work/release.yml" && grep -q '^    needs: \[package\]$' "$work/release.yml" \
    && ! grep -q '^  release:$' "$work/release.yml" \
    || { echo "publish-job.sh: $workflow no longer has the package / release / publish jobs it expects" >&2; exit 1; }

cat > "$work/event.json" <<JSON
{"ref": "refs/tags/v$version", "repository": {"full_name": "octo/mcp-replay-action", "name": "mcp-replay-action",
 "owner": {"login": "octo"}}}
JSON
mkdir -p "$work/config/act" "$work/artifacts"
echo "-P ubuntu-latest=-self-hosted" > "$work/config/act/actrc"
# shellcheck source=tests/act/stand-ins.sh
source "$act_dir/stand-ins.sh"
stand_ins "$repo_root/$workflow" "${PACKAGE_STAND_INS[@]}"

cd "$repo_root"
XDG_CONFIG_HOME="$work/config" timeout "${PUBLISH_ACT_TIMEOUT:-1200}" "$act_bin" push \
    -W "$work/release.yml" -j publish -e "$work/event.json" -P ubuntu-latest=-self-hosted \
    --container-daemon-socket - --action-offline-mode "${stand_ins[@]}" \
    --env "PYPI_REPOSITORY_URL=$index" --env "ACT_ARTIFACT_DIR=$work/artifacts" \
    --env "ACT_RELEASE_REQUIREMENTS=$repo_root/requirements/release.txt" \
    --env GITHUB_REPOSITORY=octo/mcp-replay-action "$@"
