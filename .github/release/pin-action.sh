#!/usr/bin/env bash
# Makes the release commit: action.yml's `image: Dockerfile` becomes `image: docker://IMAGE@DIGEST`,
# committed on top of the tagged commit; the version tag and the major tag (vX) are moved to it and
# pushed. Users of `@vX.Y.Z`, `@vX` or the release commit's SHA then pull the prebuilt image
# instead of building the Dockerfile on every run. Run from the repository root, on the tag.
#
# usage: pin-action.sh IMAGE@sha256:DIGEST VERSION
# env: GITHUB_TOKEN (optional: an HTTP push with it, handed to git through its environment, never
#      on a command line or in .git/config), REMOTE (default origin)
set -euo pipefail
ref=$1
version=$2
remote=${REMOTE:-origin}
[[ "$ref" =~ ^[a-z0-9./_-]+(:[0-9]+)?/[a-z0-9./_-]+@sha256:[0-9a-f]{64}$ ]] \
    || { echo "pin-action.sh: '$ref' is not IMAGE@sha256:DIGEST" >&2; exit 2; }
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "pin-action.sh: '$version' is not X.Y.Z" >&2; exit 2; }
major="v${version%%.*}"

grep -qx '  image: Dockerfile' action.yml || { echo "pin-action.sh: action.yml has no '  image: Dockerfile'" >&2; exit 1; }
sed -i "s|^  image: Dockerfile\$|  image: docker://${ref}|" action.yml
grep -qx "  image: docker://${ref}" action.yml

git config user.name "github-actions[bot]"
git config user.email "41898282+github-actions[bot]@users.noreply.github.com"
git commit -q -m "Release ${version}: action.yml runs the prebuilt image ${ref}" action.yml
git tag -f -a "v${version}" -m "mcp-replay-action ${version} (image ${ref})"
git tag -f "$major"

if [[ -n "${GITHUB_TOKEN:-}" ]]; then
    basic=$(printf 'x-access-token:%s' "$GITHUB_TOKEN" | base64 -w0)
    echo "::add-mask::$basic"
    export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=http.extraheader GIT_CONFIG_VALUE_0="AUTHORIZATION: basic $basic"
fi
git push -f "$remote" "refs/tags/v${version}" "refs/tags/${major}"
git rev-parse HEAD
