#!/usr/bin/env bash
# Installs cmark-gfm (GitHub's Markdown renderer, Debian/Ubuntu package `cmark-gfm`), which
# tests/test_cmark_links.py renders the PR comment and the job summary with: as root, or with
# passwordless sudo (GitHub's runners). Idempotent; without either, says so and the test skips
# (in CI, where CI=true, it fails instead).
set -euo pipefail
if command -v cmark-gfm >/dev/null 2>&1; then
    exit 0
fi
if [[ "$(id -u)" == 0 ]]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmark-gfm
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmark-gfm
else
    echo "cmark-gfm is missing and installing it needs root: tests/test_cmark_links.py will skip" >&2
fi
