#!/usr/bin/env bash
# Builds the Python package the release publishes, into dist/, and checks it before anything is
# published: the sdist and the wheel are built from the tagged tree (python -m build), their
# metadata and long description must pass `twine check --strict`, their version must be the tag's,
# and the wheel, installed alone into a fresh virtual environment, must run `mcp-replay demo` (a
# real recording and two replays against the bundled sample servers). The tools come from the
# hashed lock export requirements/release.txt, so the release builds with what uv.lock says.
# Run from the repository root.
#
# usage: build-package.sh VERSION      (X.Y.Z, the tag without its v)
set -euo pipefail
version=${1:?usage: build-package.sh VERSION}
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "build-package.sh: '$version' is not X.Y.Z" >&2; exit 2; }
python=${PYTHON:-python3}
work=$(mktemp -d "${RUNNER_TEMP:-/tmp}/mcp-replay-package.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$python" -m venv "$work/tools"
"$work/tools/bin/pip" install --quiet --disable-pip-version-check --require-hashes -r requirements/release.txt

rm -rf dist
"$work/tools/bin/python" -m build --sdist --wheel --outdir dist .
"$work/tools/bin/twine" check --strict dist/*

wheel=dist/mcp_replay_action-${version}-py3-none-any.whl
sdist=dist/mcp_replay_action-${version}.tar.gz
if [[ ! -f "$wheel" || ! -f "$sdist" ]]; then
    echo "::error::the tag says ${version} but the build made: $(cd dist && echo *) (pyproject.toml's version must be the tag's)"
    exit 1
fi
[[ $(find dist -maxdepth 1 -type f | wc -l) -eq 2 ]] || { echo "::error::dist/ holds more than the sdist and the wheel"; exit 1; }

# The wheel alone, as `pipx install` would install it: no checkout beside it, another directory.
"$python" -m venv "$work/smoke"
"$work/smoke/bin/pip" install --quiet --disable-pip-version-check "$wheel"
(cd "$work" && "$work/smoke/bin/mcp-replay" --version && "$work/smoke/bin/mcp-replay" demo)
(cd dist && sha256sum -- *)
