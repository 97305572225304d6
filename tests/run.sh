#!/usr/bin/env bash
# Install everything the test suite needs on a fresh machine, then run it.
# Used word for word by the README and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
# Third-party Python MCP servers still on the 1.x SDK, pinned, in a venv of their own.
if [ ! -x tests/servers/.venv-sdk1/bin/python ]; then
  "$PY" -m venv tests/servers/.venv-sdk1
fi
tests/servers/.venv-sdk1/bin/python -m pip install --quiet -r tests/servers/requirements-sdk1.txt
# mcp-server-fetch, pinned, in a venv of its own (tests/test_e2e_fetch.py).
if [ ! -x tests/servers/.venv-fetch/bin/python ]; then
  "$PY" -m venv tests/servers/.venv-fetch
fi
tests/servers/.venv-fetch/bin/python -m pip install --quiet -r tests/servers/requirements-fetch.txt
# Real MCP servers from npm, pinned by the committed lockfile.
(cd tests/servers && npm ci --no-audit --no-fund --loglevel=error)
if [ -f tests/lint-tools/package-lock.json ]; then
  (cd tests/lint-tools && npm ci --no-audit --no-fund --loglevel=error)
fi
# GitHub's Markdown renderer, from Debian's archive (root or sudo): the comment and the summary
# are rendered with it to prove no server text becomes a link (tests/test_cmark_links.py).
bash tests/install-cmark.sh
# Opt-in (root, apt, a few minutes): build the action's image with buildah and run it with
# GitHub's mount layout, and run the dogfood workflow through act. CI turns this on.
if [ "${MCP_REPLAY_CONTAINER_TESTS:-}" = 1 ]; then
  bash tests/container/install-tools.sh
fi
.venv/bin/ruff check src tests benchmarks
.venv/bin/mypy
.venv/bin/lint-imports
# The plain path, the reference every fast path is tested against: the tests of compare,
# normalising, redaction, carry, replay, confirming (noise), reading a line (stdio, beside) and the
# fast paths' own once more with every fast path off (MCP_REPLAY_FAST=0), about a minute more than
# the first four alone. Tests that compare a fast path with the plain one set their own limits (a
# CLI run, MCP_REPLAY_FAST in its environment) and still run both. The whole suite passes this way
# too (issue #19); it takes as long again as the usual run, so only these run twice.
if [ "$#" -eq 0 ]; then
  MCP_REPLAY_FAST=0 .venv/bin/pytest -q \
    tests/test_compare*.py tests/test_normalize.py tests/test_redact*.py tests/test_carry*.py \
    tests/test_replay*.py tests/test_noise.py tests/test_stdio.py tests/test_beside.py tests/test_fast_paths.py
fi
exec .venv/bin/pytest "$@"
