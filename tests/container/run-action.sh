#!/usr/bin/env bash
# Runs the action's image (docker or podman, see env.sh) the way GitHub's runner runs a Docker action: the workspace mounted at
# /github/workspace (also the working directory), /github/home, /github/workflow (the event JSON)
# and /github/file_commands (the step's GITHUB_ENV, GITHUB_PATH, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY
# and GITHUB_STATE files, named as the runner names them), inputs as INPUT_<NAME> with hyphens
# kept. Host networking lets the container reach a fake GitHub API on 127.0.0.1.
#
# usage: run-action.sh WORKSPACE RUNDIR [podman run options...]
#   RUNDIR gets file_commands/{set_env,add_path,set_output,step_summary,save_state}_step, home/
#   and workflow/event.json (write your event there first, and own them as the runner's user
#   does if you like; '{}' and empty files otherwise). Pass inputs and GITHUB_* values as
#   options, e.g.
#   run-action.sh ws run -e "INPUT_SERVER=python -m my_server" -e GITHUB_API_URL=http://127.0.0.1:8080
set -euo pipefail
# shellcheck source=tests/container/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

workspace=$(realpath "$1")
rundir=$(realpath -m "$2")
shift 2
mkdir -p "$rundir/file_commands" "$rundir/home" "$rundir/workflow"
[[ -f "$rundir/workflow/event.json" ]] || echo '{}' > "$rundir/workflow/event.json"
for name in set_env add_path set_output step_summary save_state; do
    touch "$rundir/file_commands/${name}_step"
done

# A machine whose TLS goes through a private CA: hand it to pip and npm inside the container, so
# that an `install` input or npx can reach the registries. Nothing of this is in the image.
ca_args=()
ca=${MCP_REPLAY_HOST_CA:-/etc/ssl/certs/ca-certificates.crt}
if [[ -f "$ca" ]]; then
    ca_args=(-v "$ca:/host-ca.crt:ro" -e PIP_CERT=/host-ca.crt -e NODE_EXTRA_CA_CERTS=/host-ca.crt
             -e npm_config_cafile=/host-ca.crt -e SSL_CERT_FILE=/host-ca.crt)
fi

# podman ends the container itself after the timeout; docker has no such option (the caller's
# own timeout, and `docker rm -f` by name, bound it there).
limit=()
[[ "$MCP_REPLAY_ENGINE" == podman ]] && limit=(--timeout "${MCP_REPLAY_RUN_TIMEOUT:-900}")
exec "$MCP_REPLAY_ENGINE" run --rm --network host "${limit[@]}" \
    -v "$workspace":/github/workspace \
    -v "$rundir/file_commands":/github/file_commands \
    -v "$rundir/home":/github/home \
    -v "$rundir/workflow":/github/workflow \
    -w /github/workspace \
    -e HOME=/github/home -e GITHUB_ACTIONS=true -e CI=true \
    -e GITHUB_WORKSPACE=/github/workspace \
    -e GITHUB_EVENT_PATH=/github/workflow/event.json \
    -e GITHUB_ENV=/github/file_commands/set_env_step \
    -e GITHUB_PATH=/github/file_commands/add_path_step \
    -e GITHUB_OUTPUT=/github/file_commands/set_output_step \
    -e GITHUB_STEP_SUMMARY=/github/file_commands/step_summary_step \
    -e GITHUB_STATE=/github/file_commands/save_state_step \
    "${ca_args[@]}" "$@" "$MCP_REPLAY_IMAGE"
