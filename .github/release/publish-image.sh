#!/usr/bin/env bash
# Builds the action's image, pushes it, and prints the pushed image by digest
# (`REGISTRY/OWNER/NAME@sha256:...`) on the last line of stdout. Run from the repository root.
#
# usage: publish-image.sh IMAGE VERSION
#   IMAGE      e.g. ghcr.io/owner/repo (lower case)
#   VERSION    e.g. 1.2.3 (also pushed as the tags 1.2 and 1)
# env: PLATFORMS (default linux/amd64,linux/arm64), ENGINE (docker: buildx, the default; podman:
#      buildah/podman, one platform, for machines without a Docker engine), PUSH_TLS_VERIFY (podman
#      only; false for a plain-HTTP registry on 127.0.0.1 in tests), BUILD_ARGS (extra build options),
#      DOCKERFILE (default Dockerfile; tests hand in a copy whose FROM names an offline stand-in)
set -euo pipefail
image=$1
version=$2
platforms=${PLATFORMS:-linux/amd64,linux/arm64}
engine=${ENGINE:-docker}
dockerfile=${DOCKERFILE:-Dockerfile}
major=${version%%.*}
minor=${version%.*}
tags=("$image:$version" "$image:$minor" "$image:$major")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r -a build_args <<< "${BUILD_ARGS:-}"

if [[ "$engine" == docker ]]; then
    tag_args=()
    for tag in "${tags[@]}"; do tag_args+=(-t "$tag"); done
    docker buildx build --platform "$platforms" --push --provenance=false \
        --metadata-file "$work/metadata.json" -f "$dockerfile" "${tag_args[@]}" "${build_args[@]}" . >&2
    digest=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["containerimage.digest"])' \
        "$work/metadata.json")
else
    buildah bud --layers --platform "$platforms" -f "$dockerfile" "${build_args[@]}" -t "${tags[0]}" . >&2
    for tag in "${tags[@]}"; do
        podman tag "${tags[0]}" "$tag"
        podman push --tls-verify="${PUSH_TLS_VERIFY:-true}" --digestfile "$work/digest" "$tag" >&2
    done
    digest=$(cat "$work/digest")
fi
[[ "$digest" =~ ^sha256:[0-9a-f]{64}$ ]] || { echo "no digest for the pushed image: '$digest'" >&2; exit 1; }
echo "$image@$digest"
