"""A real git repository on disk for input ``baseline``: ``main`` holds a user's server and the
workflow that asks for the baseline; the pull request's ``feature`` commit on top changes the
server. ``SERVER`` is a small stdio server (the standard library only, one tool annotated
read-only); ``REGRESSED`` answers one more from ``add``, ``SAME`` only adds a comment. The
workspace is a clone at ``feature``, as ``actions/checkout`` with ``fetch-depth: 0`` leaves it.
Shared by the entrypoint's tests (test_github_baseline.py) and the image's (test_container.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fakegithub import git
from git_origin import make_origin

SERVER = """\
import json, sys

OFFSET = 0
TOOL = {"name": "add", "annotations": {"readOnlyHint": True}, "inputSchema": {
    "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}

for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, params = msg["method"], msg.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "adder", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        args = params.get("arguments") or {}
        result = {"content": [{"type": "text", "text": str(args["a"] + args["b"] + OFFSET)}]}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": method}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""
REGRESSED = SERVER.replace("OFFSET = 0", "OFFSET = 1")
SAME = SERVER + "# a comment\n"
# The workflow that asks for the baseline: where SARIF points the baseline's findings.
WORKFLOW = ".github/workflows/mcp-replay.yml"
WORKFLOW_TEXT = """\
name: mcp-replay
on: pull_request
permissions: {}
jobs:
  replay:
    runs-on: ubuntu-latest
    permissions:
      contents: read
      pull-requests: write
    steps:
      - uses: actions/checkout@v4
        with: {persist-credentials: false, fetch-depth: 0}
      - uses: mcp-replay/mcp-replay-action@v1
        with:
          server: python server.py
          baseline: merge-base
          sarif-file: mcp-replay.sarif
"""
BASELINE_LINE = WORKFLOW_TEXT.splitlines().index("          baseline: merge-base") + 1
WORKFLOW_REF = f"octo/demo/{WORKFLOW}@refs/pull/7/merge"
WHO = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com"}
WHO |= {"GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}


def repository(root: Path, head: str, base: str = SERVER) -> tuple[Path, str, str]:
    """The workspace (a clone, at the pull request's head) and the base and head commits, with
    ``base`` and ``head`` as their server.py."""
    origin = make_origin(root, {"server.py": base.encode(), WORKFLOW: WORKFLOW_TEXT.encode()})
    ws = origin.workspace
    git(ws, "checkout", "-q", "-b", "feature")
    (ws / "server.py").write_text(head)
    git(ws, "commit", "-q", "-am", "feature", env=WHO)
    return ws, origin.sha, git(ws, "rev-parse", "HEAD")


def with_base(event: dict[str, Any], base: str) -> dict[str, Any]:
    """A pull request event payload whose base commit is ``base``."""
    event["pull_request"]["base"]["sha"] = base
    return event
