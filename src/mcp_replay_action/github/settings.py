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
import shlex
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mcp_replay_action.compare.options import CompareOptions
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.github.gitdata import check_branch_name, parse_person
from mcp_replay_action.host.discovery import DEFAULT_PATTERNS, find_cassettes
from mcp_replay_action.model.gate import DEFAULT_FAIL_ON, FAIL_ON, FailOn, GatePolicy
from mcp_replay_action.plan import Mode, Plan, parse_jobs, parse_size, startup_timeout_for
from mcp_replay_action.transport import MAX_MESSAGE, Target

# Every input and its default, as action.yml declares them (an empty default means "none").
INPUT_DEFAULTS: dict[str, str] = {
    "mode": "replay",
    "server": "",
    "url": "",
    "headers": "",
    "cassettes": "cassettes/**/*.jsonl\ncassettes/**/*.json",
    "install": "",
    "setup": "",
    "jobs": "1",
    "shard": "",
    "reports": "",
    "max-slowdown": "",
    "max-growth": "",
    "era": "recorded",
    "working-directory": ".",
    "env": "",
    "env-public": "",
    "min-grade": "",
    "min-coverage": "",
    "fail-on": "breaking",
    "fail-on-regression": "",
    "ignore-paths": "",
    "ignore-keys": "",
    "thread": "",
    "no-thread": "",
    "allow-reorder": "false",
    "timeout": "30",
    "max-message-size": "128MiB",
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

MODES = ("replay", "post-comment", "refresh", "merge", "calibrate")
COMMENT_MODES = ("auto", "always", "on-failure", "off")
GRADES = ("A", "B", "C", "D", "F")
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")
_COMMENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
DEFAULT_COMMENT_ID = "default"
MAX_TIMEOUT = 3600.0


@dataclass(frozen=True)
class Settings:
    """Everything the inputs say, cleaned. Paths are absolute and inside the workspace."""

    workspace: Path
    mode: Literal["replay", "post-comment", "refresh", "merge", "calibrate"] = "replay"
    server: tuple[str, ...] = ()  # the command, split like a shell would (stdio, or HTTP with url)
    url: str = ""  # an HTTP server (started by ``server`` when both are given)
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    cassettes: tuple[str, ...] = DEFAULT_PATTERNS
    install: str = ""
    setup: tuple[str, ...] = ()  # run before each server start, split like ``server``
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
            server=clean_server(raw("server")),
            url=clean_url(raw("url")),
            headers=clean_headers(raw("headers")),
            cassettes=clean_cassettes(raw("cassettes")),
            install=clean_install(raw("install")),
            setup=clean_setup(raw("setup")),
            jobs=clean_jobs(raw("jobs")),
            shard=clean_shard(raw("shard")),
            reports=clean_reports(raw("reports")),
            max_slowdown=clean_factor("max-slowdown", raw("max-slowdown")),
            max_growth=clean_factor("max-growth", raw("max-growth")),
            era=clean_era(raw("era")),
            working_directory=clean_working_directory(raw("working-directory"), workspace),
            env=clean_env(raw("env")),
            env_public=clean_list(raw("env-public")),
            min_grade=clean_min_grade(raw("min-grade")),
            min_coverage=clean_min_coverage(raw("min-coverage")),
            fail_on=clean_fail_on(raw("fail-on"), raw("fail-on-regression")),
            ignore_paths=clean_list(raw("ignore-paths")),
            ignore_keys=clean_list(raw("ignore-keys")),
            thread=clean_thread_rules("thread", raw("thread")),
            no_thread=clean_thread_rules("no-thread", raw("no-thread")),
            allow_reorder=clean_bool("allow-reorder", raw("allow-reorder")),
            timeout=clean_timeout(raw("timeout")),
            max_message=clean_max_message_size(raw("max-message-size")),
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
        """The replay these settings describe (``mode``: ``refresh`` for ``mode: refresh``): the
        same ``Plan`` the CLI builds from the same options (``tests/test_plan.py``)."""
        target = Target(
            command=self.server,
            url=self.url or None,
            headers=dict(self.headers),
            cwd=str(self.working_directory),
            env=dict(self.env),
            setup=self.setup,
            startup_timeout=startup_timeout_for(self.timeout),
            max_message=self.max_message,
        )
        paths = tuple(find_cassettes(self.cassettes, self.workspace, confine=True, what="input cassettes"))
        if self.shard is not None:
            from mcp_replay_action.replay.shard import share

            paths = share(paths, *self.shard)
        return Plan(
            paths=paths,
            target=target,
            compare=CompareOptions(
                ignore_paths=self.ignore_paths,
                ignore_keys=self.ignore_keys,
                allow_reorder=self.allow_reorder,
                budget=self.timeout,  # a comparison has the request's time, as on the command line
            ),
            gate=self.gate_policy(),
            mode=mode,
            timeout=self.timeout,
            root=str(self.workspace),
            jobs=self.jobs,
            max_slowdown=self.max_slowdown,
            max_growth=self.max_growth,
            era=self.era,
            public_env=self.env_public,
            thread=self.thread,
            no_thread=self.no_thread,
        )

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


def _bad(name: str, value: str, allowed: str) -> ConfigError:
    shown = value if len(value) <= 60 else value[:57] + "..."
    return ConfigError(f"input {name}: {shown!r} is not valid; expected {allowed}")


def clean_thread_rules(name: str, value: str) -> tuple[str, ...]:
    """Threading rules (``thread``/``no-thread``), one a line or comma-separated: keys or answer
    paths (docs/threading.md), each checked now."""
    from mcp_replay_action.compare.correlate import ThreadRules

    rules = clean_list(value)
    try:
        ThreadRules(rules)
    except ConfigError as exc:
        raise ConfigError(f"input {name}: {exc}") from None
    return rules


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
    raise _bad("mode", value, "one of " + ", ".join(MODES))


def clean_era(value: str) -> str:
    """``era``: ``recorded`` (empty), ``handshake`` or ``stateless``."""
    era = value.strip().lower() or "recorded"
    if era not in ("recorded", "handshake", "stateless"):
        raise _bad("era", value, "one of recorded, handshake, stateless")
    return era


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
        raise _bad(name, value, f"at most {limit} characters")
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
        raise _bad("refresh-workflow", value, "a workflow file name such as mcp-replay.yml")
    return name


def clean_server(value: str, name: str = "server") -> tuple[str, ...]:
    """The stdio command, split like a POSIX shell would (quotes kept together)."""
    if not value:
        return ()
    try:
        parts = tuple(shlex.split(value))
    except ValueError as exc:
        raise _bad(name, value, f"a command line ({exc})") from None
    return parts


def clean_factor(name: str, value: str) -> float | None:
    """``max-slowdown``, ``max-growth``: a factor above 1; empty: latency (size) is not checked."""
    if not value:
        return None
    try:
        factor = float(value)
    except ValueError:
        factor = 0.0
    if not 1 < factor <= 1e6:
        raise _bad(name, value, "a factor above 1, such as 3")
    return factor


def clean_min_coverage(value: str) -> float | None:
    """``min-coverage``: a percentage from 0 to 100 (a trailing ``%`` allowed); empty: no
    coverage gate."""
    text = value.strip().removesuffix("%").strip()
    if not text:
        return None
    try:
        percent = float(text)
    except ValueError:
        percent = -1.0
    if not 0 <= percent <= 100:
        raise _bad("min-coverage", value, "a percentage from 0 to 100, such as 80")
    return percent


def clean_reports(value: str) -> tuple[str, ...]:
    """``reports``: glob patterns one a line (empty: none; only ``mode: merge`` reads them)."""
    return clean_cassettes(value) if value.strip() else ()


def clean_shard(value: str) -> tuple[int, int] | None:
    """``shard``: ``i/n`` (a matrix job's share of the cassettes); empty: every cassette."""
    if not value:
        return None
    from mcp_replay_action.replay.shard import parse_shard

    try:
        return parse_shard(value)
    except ConfigError as exc:
        raise ConfigError(f"input shard: {exc}") from None


def clean_jobs(value: str) -> int:
    """``jobs``: a count from 1 to 256 or ``auto``; empty: 1."""
    try:
        return parse_jobs(value or "1")
    except ConfigError as exc:
        raise ConfigError(f"input jobs: {exc}") from None


def clean_setup(value: str) -> tuple[str, ...]:
    """The ``setup`` command, split like ``server``; empty: none."""
    return clean_server(value.strip(), "setup")


def clean_url(value: str) -> str:
    if not value:
        return ""
    if not re.match(r"https?://[^\s/]+", value) or any(c.isspace() for c in value):
        raise _bad("url", value, "an http:// or https:// URL")
    return value


def clean_headers(value: str) -> tuple[tuple[str, str], ...]:
    """``Name: value`` lines for the HTTP transport."""
    headers: list[tuple[str, str]] = []
    for number, line in enumerate(value.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, sep, rest = line.partition(":")
        name = name.strip()
        if not sep or not _HEADER_NAME.fullmatch(name):
            # Never echo the line: it may carry a credential.
            raise ConfigError(f"input headers: line {number} is not valid; expected 'Name: value'")
        headers.append((name, rest.strip()))
    return tuple(headers)


def clean_cassettes(value: str) -> tuple[str, ...]:
    """Newline-separated glob patterns relative to the workspace; ``!pattern`` excludes."""
    patterns: list[str] = []
    for line in value.splitlines():
        pattern = line.strip()
        if not pattern or pattern.startswith("#"):
            continue
        bare = pattern[1:] if pattern.startswith("!") else pattern
        if os.path.isabs(bare) or ".." in Path(bare).parts:
            raise _bad("cassettes", pattern, "glob patterns relative to the workspace, without '..'")
        patterns.append(pattern)
    if not [p for p in patterns if not p.startswith("!")]:
        raise _bad("cassettes", value, "at least one glob pattern such as cassettes/**/*.jsonl")
    return tuple(patterns)


def clean_install(value: str) -> str:
    return value


def clean_working_directory(value: str, workspace: Path) -> Path:
    path = clean_path("working-directory", value or ".", workspace)
    if not path.is_dir():
        raise ConfigError(f"input working-directory: {value!r} is not a directory in the workspace")
    return path


def clean_path(name: str, value: str, workspace: Path) -> Path:
    """An absolute path that stays inside the workspace (symlinks resolved)."""
    if "\x00" in value:
        raise _bad(name, value.replace("\x00", "\\0"), "a path inside the workspace")
    path = (workspace / value).resolve()
    if not path.is_relative_to(workspace):
        raise _bad(name, value, "a path inside the workspace")
    return path


def clean_optional_path(name: str, value: str, workspace: Path) -> Path | None:
    """A file to write inside the workspace, or None when the input is empty."""
    return clean_path(name, value, workspace) if value else None


def clean_env(value: str) -> tuple[tuple[str, str], ...]:
    """``KEY=VALUE`` lines. Values are never echoed in errors: they are often secrets."""
    pairs: list[tuple[str, str]] = []
    for number, line in enumerate(value.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, rest = line.partition("=")
        key = key.strip()
        if not sep or not _ENV_NAME.fullmatch(key):
            raise ConfigError(f"input env: line {number} is not valid; expected KEY=VALUE with KEY like MY_VAR")
        pairs.append((key, rest))
    return tuple(pairs)


def clean_min_grade(value: str) -> str | None:
    if not value:
        return None
    grade = value.upper()
    if grade not in GRADES:
        raise _bad("min-grade", value, "one of " + ", ".join(GRADES) + " (or empty for no grade gate)")
    return grade


def clean_fail_on(value: str, fail_on_regression: str) -> FailOn:
    """``fail-on``; the older ``fail-on-regression: true`` means ``any`` and ``false`` means
    ``none`` when ``fail-on`` is left at its default."""
    fail_on = value.lower()
    if fail_on not in FAIL_ON:
        raise _bad("fail-on", value, "one of " + ", ".join(FAIL_ON))
    if not fail_on_regression or fail_on != DEFAULT_FAIL_ON:
        return fail_on  # type: ignore[return-value]
    return "any" if clean_bool("fail-on-regression", fail_on_regression) else "none"


def clean_bool(name: str, value: str) -> bool:
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise _bad(name, value, "true or false")


def clean_list(value: str) -> tuple[str, ...]:
    """Items one a line or comma-separated."""
    items = (item.strip() for line in value.splitlines() for item in line.split(","))
    return tuple(item for item in items if item)


def clean_timeout(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise _bad("timeout", value, f"a number of seconds between 0 and {MAX_TIMEOUT:g}") from None
    if not 0 < seconds <= MAX_TIMEOUT:
        raise _bad("timeout", value, f"a number of seconds between 0 and {MAX_TIMEOUT:g}")
    return seconds


def clean_max_message_size(value: str) -> int:
    try:
        return parse_size(value)
    except ValueError as exc:
        raise _bad("max-message-size", value, str(exc).split("; got")[0]) from None


def clean_comment(value: str) -> Literal["auto", "always", "on-failure", "off"]:
    lowered = value.lower()
    for mode in COMMENT_MODES:
        if lowered == mode:
            return mode  # type: ignore[return-value]
    if lowered in _FALSE:
        return "off"
    raise _bad("comment", value, "one of " + ", ".join(COMMENT_MODES))


def clean_comment_id(value: str) -> str:
    """A short name; it goes into a hidden HTML marker, so only a safe alphabet is accepted."""
    if not value:
        return DEFAULT_COMMENT_ID
    if not _COMMENT_ID.fullmatch(value):
        raise _bad("comment-id", value, "letters, digits, '.', '_' or '-' (at most 64)")
    return value


def check_target(server: tuple[str, ...], url: str) -> None:
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
