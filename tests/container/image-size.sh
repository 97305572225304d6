#!/usr/bin/env bash
# Measures the built image the way a registry and a runner see it: the layers `save` exports
# (Docker's layering: one per instruction), unpacked and gzip-compressed as a push compresses them,
# split into the base image's layers and the layers the Dockerfile adds. Prints key=value lines.
set -euo pipefail
# shellcheck source=tests/container/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
work=$(mktemp -d /tmp/mcp-replay-size.XXXXXX)
trap 'rm -rf "$work"' EXIT
base=$(base_image)
base_layers=$("$MCP_REPLAY_ENGINE" image inspect --format '{{len .RootFS.Layers}}' "$base")
"$MCP_REPLAY_ENGINE" save -o "$work/image.tar" "$MCP_REPLAY_IMAGE" >/dev/null 2>"$work/save.log" \
    || { cat "$work/save.log" >&2; exit 1; }
echo "base=$base"
python3 - "$work/image.tar" "$base_layers" <<'PY'
import json, sys, tarfile, zlib

archive, base_count = sys.argv[1], int(sys.argv[2])
with tarfile.open(archive) as tar:
    manifest = json.load(tar.extractfile("manifest.json"))
    layers = manifest[0]["Layers"]
    sizes = []
    for name in layers:
        member = tar.extractfile(name)
        raw = packed = 0
        gzip = zlib.compressobj(6, zlib.DEFLATED, 31)
        while chunk := member.read(1 << 20):
            raw += len(chunk)
            packed += len(gzip.compress(chunk))
        packed += len(gzip.flush())
        sizes.append((raw, packed))
base, added = sizes[:base_count], sizes[base_count:]
print(f"layers={len(sizes)} base_layers={base_count}")
print(f"base_unpacked={sum(r for r, _ in base)} base_compressed={sum(p for _, p in base)}")
print(f"added_unpacked={sum(r for r, _ in added)} added_compressed={sum(p for _, p in added)}")
print(f"image_unpacked={sum(r for r, _ in sizes)} image_compressed={sum(p for _, p in sizes)}")
print("added_layers=" + ",".join(f"{r}/{p}" for r, p in added))
PY
