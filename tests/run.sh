#!/usr/bin/env bash
# Install everything the test suite needs on a fresh machine, then run it.
# Used word for word by the README and by .ci/run.
#
#   bash tests/run.sh          the whole suite, as CI runs it: every tier (tests/tiers.py), the
#                              container one when MCP_REPLAY_CONTAINER_TESTS=1, in parallel
#   bash tests/run.sh quick    the inner loop: the unit tier, Hypothesis's quick profile
#   bash tests/run.sh ARGS     the same installs, then pytest ARGS (a file, -m integration, ...)
#
# Tests run in parallel (pytest-xdist): as many workers as cores, or PYTEST_XDIST_AUTO_NUM_WORKERS;
# `-n 0` among ARGS runs them in this process. A test that must not share the machine with another
# is grouped (xdist_group, tests/conftest.py).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
if [ "${1:-}" = quick ]; then
  shift
  # The unit tier needs the package and its test tools, nothing else: installed when
  # pyproject.toml is newer than the last install.
  if [ ! -f .venv/.installed ] || [ pyproject.toml -nt .venv/.installed ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e '.[test]'
    touch .venv/.installed
  fi
  .venv/bin/ruff check src tests benchmarks
  .venv/bin/mypy
  .venv/bin/lint-imports
  export HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-quick}"
  exec .venv/bin/pytest -q -m unit -n auto "$@"
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
touch .venv/.installed
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
# GitHub's mount layout, and run the dogfood workflow through act. CI turns this on. The container
# tier is one group on one worker, beside the others: it waits on downloads and the disk much of
# its time, so it gets a worker of its own on top of one per core.
if [ "${MCP_REPLAY_CONTAINER_TESTS:-}" = 1 ]; then
  bash tests/container/install-tools.sh
  export PYTEST_XDIST_AUTO_NUM_WORKERS="${PYTEST_XDIST_AUTO_NUM_WORKERS:-$(($(nproc) + 1))}"
fi
.venv/bin/ruff check src tests benchmarks
.venv/bin/mypy
.venv/bin/lint-imports
# The plain path, the reference every fast path is tested against, runs inside the same run: the
# modules of the fast paths run each test twice, fast and plain (the `limits` fixture).
# --durations: the slowest tests, so a test that grows slow is seen where it grew.
exec .venv/bin/pytest -n auto --dist loadgroup --durations=30 "$@"
