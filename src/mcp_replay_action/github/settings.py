"""The action's settings: one frozen dataclass built from the environment the runner gives us.

The runner passes each input as ``INPUT_<NAME>``, upper-cased with hyphens kept
(``INPUT_MIN-GRADE``); some local runners use underscores (``INPUT_MIN_GRADE``), so both are read.
An empty value means "unset" because ``act`` passes every input, given or not. Each input has a
``clean_<name>`` function that turns the raw string into a typed value or raises a one-line
``ConfigError`` naming the input and what it accepts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.github.baseline import check_startable, clean_baseline
from mcp_replay_action.github.gitdata import check_branch_name, parse_person
from mcp_replay_action.host.discovery import DEFAULT_PATTERNS
from mcp_replay_action.model.gate import DEFAULT_FAIL_ON, FailOn, GatePolicy
from mcp_replay_action.options import (
    BY_INPUT,
    Inputs,
    bad_input,
    clean_bool,
    clean_cassettes,
    clean_list,
    clean_path,
    from_inputs,
    plan_from,
)
from mcp_replay_action.plan import Mode, Plan
from mcp_replay_action.transport import MAX_MESSAGE

# The inputs that are not replay options (the replay's are rows of ``options.OPTIONS``, which
# holds their defaults), with their defaults as action.yml declares them ("": none).
ACTION_INPUTS: dict[str, str] = {
    "mode": "replay",
    "install": "",
    "baseline": "",
    "reports": "",
    "comment": "auto",
    "comment-id": "",
    "comment-file": "mcp-replay-comment.json",
    "report-file": "mcp-replay-report.json",
    "markdown-file": "",
    "junit-file": "",
    "badge-file": "",
    "sarif-file": "",
    "annotations": "true",
    "job-summary": "true",
    "github-token": "",
    "refresh-branch": "mcp-replay/refresh/",
    "commit-message": "mcp-replay: refresh cassettes",
    "commit-author": "",
    "pr-title": "mcp-replay: refresh cassettes",
    "pr-labels": "",
    "pr-draft": "false",
    "refresh-workflow": "",
    "drift-labels": "",
    "scenarios": "",
}
# Every input and its default, as action.yml declares them (``tests/test_action_files.py``).
INPUT_DEFAULTS: dict[str, str] = {**{name: row.input_default for name, row in BY_INPUT.items()}, **ACTION_INPUTS}

MODES = ("replay", "post-comment", "refresh", "merge", "calibrate")
COMMENT_MODES = ("auto", "always", "on-failure", "off")
_COMMENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
DEFAULT_COMMENT_ID = "default"


@dataclass(frozen=True)
class Settings:
    """Everything the inputs say, cleaned. Paths are absolute and inside the workspace. The
    replay's inputs are rows of ``options.OPTIONS`` (cleaned there, by the table's cleaners); a
    field has the name of its row's value."""

    workspace: Path
    mode: Literal["replay", "post-comment", "refresh", "merge", "calibrate"] = "replay"
    server: tuple[str, ...] = ()  # the command, split like a shell would (stdio, or HTTP with url)
    url: str | None = None  # an HTTP server (started by ``server`` when both are given)
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    cassettes: tuple[str, ...] = DEFAULT_PATTERNS
    install: str = ""
    baseline: str = ""  # "", "merge-base" or a ref: compare with that build too (``baseline.py``)
    setup: tuple[str, ...] = ()  # run before each server start, split like ``server``
    reset: tuple[str, ...] = ()  # with ``url``: run before each pass, split like ``server``
    jobs: int = 1  # cassettes replayed at once, each with its own server
    shard: tuple[int, int] | None = None  # (i, n): replay only shard i of n
    reports: tuple[str, ...] = ()  # mode merge: globs of the shards' JSON reports
    max_slowdown: float | None = None  # flag answers this many times slower than recorded
    max_growth: float | None = None  # flag answers this many times larger than recorded
    era: str = "recorded"  # the protocol era cassettes are sent in (``translate.py``)
    working_directory: Path = Path(".")
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # values may be secrets
    env_public: tuple[str, ...] = ()  # ``env`` names whose values may be shown (all others are redacted)
    min_grade: str | None = None
    min_coverage: float | None = None  # percent of listed tools, prompts and templates called
    fail_on: FailOn = DEFAULT_FAIL_ON
    ignore_paths: tuple[str, ...] = ()
    ignore_keys: tuple[str, ...] = ()
    ignore_notifications: tuple[str, ...] = ()  # server notification methods left out
    thread: tuple[str, ...] = ()  # declared threading rules (keys or answer paths)
    no_thread: tuple[str, ...] = ()
    allow_reorder: bool = False
    timeout: float = 30.0
    max_message: int = MAX_MESSAGE
    comment: Literal["auto", "always", "on-failure", "off"] = "auto"
    comment_id: str = DEFAULT_COMMENT_ID
    comment_file: Path = Path("mcp-replay-comment.json")
    report_file: Path = Path("mcp-replay-report.json")
    markdown_file: Path | None = None
    junit_file: Path | None = None
    badge_file: Path | None = None
    sarif_file: Path | None = None
    annotations: bool = True
    job_summary: bool = True
    github_token: str = field(default="", repr=False)
    refresh_branch: str = "mcp-replay/refresh/"  # ending in "/": a prefix to the base branch
    commit_message: str = "mcp-replay: refresh cassettes"
    commit_author: str = ""  # "Name <email>"; empty: github-actions[bot]
    pr_title: str = "mcp-replay: refresh cassettes"
    pr_labels: tuple[str, ...] = ()
    pr_draft: bool = False
    refresh_workflow: str = ""  # the workflow file the failing comment links to; empty: this one
    drift_labels: tuple[str, ...] = ()
    scenarios: Path | None = None  # a scenarios.yml whose cassettes a refresh re-records from it

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        """Read and clean every input. Raises ConfigError on the first bad one."""
        workspace = clean_workspace(environ.get("GITHUB_WORKSPACE", ""))

        def raw(name: str) -> str:
            return read_input(environ, name)

        settings = cls(
            workspace=workspace,
            mode=clean_mode(raw("mode")),
            **from_inputs(Inputs(workspace, raw)),
            install=clean_install(raw("install")),
            baseline=clean_baseline(raw("baseline")),
            reports=clean_reports(raw("reports")),
            comment=clean_comment(raw("comment")),
            comment_id=clean_comment_id(raw("comment-id")),
            comment_file=clean_path("comment-file", raw("comment-file"), workspace),
            report_file=clean_path("report-file", raw("report-file"), workspace),
            markdown_file=clean_optional_path("markdown-file", raw("markdown-file"), workspace),
            junit_file=clean_optional_path("junit-file", raw("junit-file"), workspace),
            badge_file=clean_optional_path("badge-file", raw("badge-file"), workspace),
            sarif_file=clean_optional_path("sarif-file", raw("sarif-file"), workspace),
            annotations=clean_bool("annotations", raw("annotations")),
            job_summary=clean_bool("job-summary", raw("job-summary")),
            # The runner also exports the job token as GITHUB_TOKEN in some setups (composite).
            github_token=raw("github-token") or environ.get("GITHUB_TOKEN", "").strip(),
            refresh_branch=clean_refresh_branch(raw("refresh-branch")),
            commit_message=clean_text("commit-message", raw("commit-message"), 10_000),
            commit_author=clean_commit_author(raw("commit-author")),
            pr_title=clean_text("pr-title", raw("pr-title"), 256),
            pr_labels=clean_list(raw("pr-labels")),
            pr_draft=clean_bool("pr-draft", raw("pr-draft")),
            refresh_workflow=clean_refresh_workflow(raw("refresh-workflow")),
            drift_labels=clean_list(raw("drift-labels")),
            scenarios=clean_scenarios(raw("scenarios"), workspace),
        )
        if settings.mode in ("replay", "refresh", "calibrate"):
            check_target(settings.server, settings.url)
            check_startable(settings.baseline, settings.server, settings.url)
        if settings.era != "recorded" and settings.mode in ("refresh", "calibrate"):
            raise ConfigError(
                f"input era: mode {settings.mode} re-records each cassette in its own era; leave era empty"
            )
        if settings.mode == "merge" and not settings.reports:
            raise ConfigError("input reports: mode merge needs the shards' JSON report files (a glob)")
        return settings

    def gate_policy(self) -> GatePolicy:
        """The gate these inputs ask for (``fail-on``, ``min-grade``, ``min-coverage``)."""
        return GatePolicy(fail_on=self.fail_on, min_grade=self.min_grade, min_coverage=self.min_coverage)

    def plan(self, mode: Mode = "check") -> Plan:
        """The replay these settings describe (``mode``: ``refresh`` for ``mode: refresh``), by
        the ``plan_from`` the CLI uses too; cassettes are found inside the workspace."""
        return plan_from(self.values(), root=str(self.workspace), confine=True, mode=mode)

    def values(self) -> dict[str, object]:
        """The options table's values these inputs give (``options.plan_from``'s)."""
        return {row.key: getattr(self, row.field) for row in BY_INPUT.values() if row.field is not None}

    def relative(self, path: str | os.PathLike[str]) -> str:
        """``path`` relative to the workspace, with forward slashes (how GitHub names files)."""
        return Path(os.path.relpath(Path(path).resolve(), self.workspace)).as_posix()


def read_input(environ: Mapping[str, str], name: str) -> str:
    """The raw value of input ``name`` (hyphenated or underscored variable), or its default."""
    key = "INPUT_" + name.upper()
    for candidate in (key, key.replace("-", "_"), key.replace(" ", "_")):
        value = environ.get(candidate)
        if value is not None and value.strip():
            return value.strip()
    return INPUT_DEFAULTS[name]


def clean_workspace(value: str) -> Path:
    """GITHUB_WORKSPACE, else the current directory (a local run)."""
    path = Path(value or os.getcwd()).resolve()
    if not path.is_dir():
        raise ConfigError(f"GITHUB_WORKSPACE {value!r} is not a directory")
    return path


def clean_mode(value: str) -> Literal["replay", "post-comment", "refresh", "merge", "calibrate"]:
    mode = value.lower()
    for known in MODES:
        if mode == known:
            return known  # type: ignore[return-value]
    raise bad_input("mode", value, "one of " + ", ".join(MODES))


def clean_refresh_branch(value: str) -> str:
    """A branch name git accepts, or a prefix of one ending in ``/`` (the default,
    ``mcp-replay/refresh/``: the base branch's name follows, ``refresh.branch_for``). The refresh
    force-updates it, so it must not be ``main``-like by accident."""
    if value.endswith("/"):
        check_branch_name(value + "main")
        return value
    return check_branch_name(value)


def clean_text(name: str, value: str, limit: int) -> str:
    """Free text (a title, a message) of at most ``limit`` characters."""
    if len(value) > limit:
        raise bad_input(name, value, f"at most {limit} characters")
    return value


def clean_commit_author(value: str) -> str:
    """``Name <email>``, or empty for github-actions[bot]."""
    if not value:
        return ""
    parse_person(value)
    return value


def clean_scenarios(value: str, workspace: Path) -> Path | None:
    """A scenarios.yml inside the workspace, or None."""
    if not value:
        return None
    path = clean_path("scenarios", value, workspace)
    if not path.is_file():
        raise ConfigError(f"input scenarios: {value!r} is not a file in the workspace")
    return path


def clean_refresh_workflow(value: str) -> str:
    """A workflow file name (``mcp-replay.yml``) in ``.github/workflows``."""
    name = value.removeprefix(".github/workflows/")
    if name and not re.fullmatch(r"[A-Za-z0-9._-]+\.ya?ml", name):
        raise bad_input("refresh-workflow", value, "a workflow file name such as mcp-replay.yml")
    return name


def clean_reports(value: str) -> tuple[str, ...]:
    """``reports``: glob patterns one a line (empty: none; only ``mode: merge`` reads them)."""
    return clean_cassettes(value) if value.strip() else ()


def clean_install(value: str) -> str:
    return value


def clean_optional_path(name: str, value: str, workspace: Path) -> Path | None:
    """A file to write inside the workspace, or None when the input is empty."""
    return clean_path(name, value, workspace) if value else None


def clean_comment(value: str) -> Literal["auto", "always", "on-failure", "off"]:
    lowered = value.lower()
    for mode in COMMENT_MODES:
        if lowered == mode:
            return mode  # type: ignore[return-value]
    if lowered in ("false", "no", "off", "0"):
        return "off"
    raise bad_input("comment", value, "one of " + ", ".join(COMMENT_MODES))


def clean_comment_id(value: str) -> str:
    """A short name; it goes into a hidden HTML marker, so only a safe alphabet is accepted."""
    if not value:
        return DEFAULT_COMMENT_ID
    if not _COMMENT_ID.fullmatch(value):
        raise bad_input("comment-id", value, "letters, digits, '.', '_' or '-' (at most 64)")
    return value


def check_target(server: tuple[str, ...], url: str | None) -> None:
    """Replay needs a server: a stdio command, a URL, or both (the command starts an HTTP server
    that then answers at the URL)."""
    if not server and not url:
        raise ConfigError("input server: missing; give the command that starts your MCP server (or url)")


@dataclass(frozen=True)
class RunContext:
    """What the runner tells about this run (``GITHUB_*``), read once before the environment is
    scrubbed for the server under test."""

    api_url: str = "https://api.github.com"
    server_url: str = "https://github.com"
    repository: str = ""
    run_id: str = ""
    sha: str = ""
    output_path: str = ""
    summary_path: str = ""
    action_repository: str = ""
    action_path: str = ""  # where the runner put this action's files: .../_actions/<owner>/<repo>/<ref>
    workflow_ref: str = ""  # owner/repo/.github/workflows/<file>@<ref>: the running workflow
    debug: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> RunContext:
        return cls(
            api_url=(environ.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
            server_url=(environ.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
            repository=environ.get("GITHUB_REPOSITORY", ""),
            run_id=environ.get("GITHUB_RUN_ID", ""),
            sha=environ.get("GITHUB_SHA", ""),
            output_path=environ.get("GITHUB_OUTPUT", ""),
            summary_path=environ.get("GITHUB_STEP_SUMMARY", ""),
            action_repository=environ.get("GITHUB_ACTION_REPOSITORY", ""),
            action_path=environ.get("GITHUB_ACTION_PATH", ""),
            workflow_ref=environ.get("GITHUB_WORKFLOW_REF", ""),
            debug=environ.get("RUNNER_DEBUG") == "1" or environ.get("ACTIONS_STEP_DEBUG", "").lower() == "true",
        )

    @property
    def run_url(self) -> str:
        """The link to this workflow run, or empty outside GitHub."""
        if not (self.repository and self.run_id.isdigit()):
            return ""
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"

    def workflow_url(self, file_name: str = "") -> str:
        """The page of workflow ``file_name`` (default: the running one), where "Run workflow"
        starts a refresh; empty when the runner did not say enough."""
        name = file_name or self.workflow_ref.partition("@")[0].rpartition("/")[2]
        if not (self.repository and re.fullmatch(r"[A-Za-z0-9._-]+\.ya?ml", name)):
            return ""
        return f"{self.server_url}/{self.repository}/actions/workflows/{name}"


# Variables the code under test (install command, server) must not inherit: tokens, the inputs
# (``env`` may hold secrets) and the runner's file commands (they would let it set our outputs).
SCRUBBED_PREFIXES = ("INPUT_",)
SCRUBBED_NAMES = (
    "GITHUB_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    "ACTIONS_RUNTIME_URL",
    "ACTIONS_RESULTS_URL",
    "ACTIONS_CACHE_URL",
    "GITHUB_OUTPUT",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_ENV",
    "GITHUB_PATH",
    "GITHUB_STATE",
)


def is_scrubbed(name: str) -> bool:
    """Whether the code under test must not see variable ``name``."""
    return name.startswith(SCRUBBED_PREFIXES) or name in SCRUBBED_NAMES


def scrub(environ: MutableMapping[str, str]) -> None:
    """Remove tokens, inputs and file-command paths from ``environ`` (the process environment,
    which every child inherits)."""
    for name in list(environ):
        if is_scrubbed(name):
            del environ[name]
