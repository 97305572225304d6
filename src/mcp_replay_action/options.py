"""The replay's options, one row each: its spellings on the command line, its action input, the
click type, the action's cleaner, the default and the help.

``mcp-replay replay``'s click options (``commands/replay.py``), the action's settings
(``github/settings.py``) and the plan (``plan.plan_from``) are all built from ``OPTIONS``, so an
option is spelled, checked and defaulted in one place and means the same at every edge. Each
edge turns what it was given into *values*: a mapping from a row's ``key`` to a typed value, the
same type whichever edge read it (``Option.from_flag`` for a parsed flag, ``Option.clean`` for an
input's text); ``plan.plan_from`` reads those.

An action input's cleaner raises a one-line ``ConfigError`` naming the input and what it accepts
(python-coverage-comment-action's ``clean_<name>``), and never echoes a value that may be secret.
"""

from __future__ import annotations

import math
import os
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.plan import REQUEST_TIMEOUT, Mode, Plan, make_target, startup_timeout_for
from mcp_replay_action.wire.protocol import ERAS

if TYPE_CHECKING:
    from pathlib import Path  # a replay spawns its server before pathlib is needed

    from mcp_replay_action.transport import Target

# What a click option decorates: a command's function, or a command (``click.option``'s own type).
Decorated = TypeVar("Decorated", bound=Callable[..., object] | click.Command)


@dataclass(frozen=True)
class Inputs:
    """What an action input's cleaner may read besides its own text: the workspace (paths stay
    inside it) and the other inputs' raw text (``fail-on`` reads ``fail-on-regression``)."""

    workspace: Path
    raw: Callable[[str], str]


@dataclass(frozen=True)
class Option:
    """One replay option. ``flags`` empty: an action input only; ``input`` None: a flag only."""

    key: str  # its value's name in plan_from's values, and the click parameter's name
    flags: tuple[str, ...] = ()  # the replay command's spellings (``--confirm/--no-confirm``: an on/off pair)
    input: str | None = None  # the action input (action.yml)
    input_default: str = ""  # the input's default, as action.yml declares it ("": none)
    # The action input's text (stripped; the default when empty) -> the value. Raises ConfigError.
    clean: Callable[[str, Inputs], object] | None = None
    # Where the settings keep the value (default: ``key``); None: folded into another input's.
    setting: str | None = ""
    help: str = ""
    type: Callable[[], click.ParamType] | None = None  # click's type for the flag (made when the command is built)
    default: object = None  # the flag's default, in click's terms
    metavar: str | None = None
    multiple: bool = False
    is_flag: bool = False
    required: bool = False
    show_default: bool = False
    from_flag: Callable[[Any], object] = lambda value: value  # click's value -> the value

    @property
    def field(self) -> str | None:
        """The settings field that holds this input's value (None: none does)."""
        return self.key if self.setting == "" else self.setting

    def click_option(self, flags: Sequence[str] = (), **changes: object) -> Callable[[Decorated], Decorated]:
        """This row as a click option (``flags``: other spellings, for a command that takes fewer)."""
        kwargs: dict[str, Any] = {"help": self.help, "metavar": self.metavar}
        if self.type is not None:
            kwargs["type"] = self.type()
        if self.multiple:
            kwargs["multiple"] = True
        if self.is_flag:
            kwargs["is_flag"] = True
        if self.required:
            kwargs["required"] = True
        if self.default is not None:
            kwargs["default"] = self.default
        if self.show_default:
            kwargs["show_default"] = True
        kwargs.update(changes)
        return click.option(*(flags or self.flags), self.key, **{k: v for k, v in kwargs.items() if v is not None})

    @property
    def value_default(self) -> object:
        """The value when the option is given nowhere."""
        return self.from_flag(() if self.multiple else self.default)


# ---------------------------------------------------------------------------------------------
# click types
# ---------------------------------------------------------------------------------------------


class Seconds(click.FloatRange):
    """A number of seconds in a range; ``nan`` (which every range check lets through) and
    ``inf`` are refused."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return seconds


class Size(click.ParamType):
    """A size in bytes: ``64MiB``, ``512KiB``, ``1G`` or a plain number of bytes."""

    name = "size"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_size(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class Jobs(click.ParamType):
    """``--jobs``: a count from 1 to 256, or ``auto`` (``parse_jobs``)."""

    name = "text"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_jobs(str(value))
        except ConfigError as exc:
            self.fail(str(exc), param, ctx)


# ---------------------------------------------------------------------------------------------
# parsers both edges use
# ---------------------------------------------------------------------------------------------


def parse_jobs(value: str) -> int:
    """How many cassettes to replay at once (``--jobs``, action input ``jobs``): a count from 1
    to 256, or ``auto`` for the cores this process may use. Raises ConfigError otherwise."""
    value = value.strip()
    if value == "auto":
        from mcp_replay_action.transport.process import usable_cpus  # here: it imports subprocess

        return max(1, usable_cpus())
    try:
        jobs = int(value)
    except ValueError:
        jobs = 0
    if not 1 <= jobs <= 256:
        raise ConfigError(f"expected a number from 1 to 256 or 'auto', got {value!r}")
    return jobs


def parse_env(pairs: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` options into a dict; a pair without ``=`` is a usage error."""
    env: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"--env expects KEY=VALUE, got {pair!r}")
        env[key] = value
    return env


def parse_headers(pairs: Sequence[str]) -> dict[str, str]:
    """``Name: value`` options into a dict (values are secrets: never echoed, even in errors)."""
    if not pairs:
        return {}  # a stdio replay never imports the HTTP client
    from mcp_replay_action.transport.http_client import parse_header

    return dict(parse_header(pair) for pair in pairs)


def parse_size(text: str) -> int:
    """``64MiB``, ``64M``, ``512k``, ``1G``, ``1000000`` -> bytes (binary units). Raises ValueError."""
    match = re.fullmatch(r"\s*(\d+)\s*(?:([kKmMgG])(?:i?B)?|B)?\s*", text)
    if match is None:
        raise ValueError(f"a size such as 64MiB, 512KiB or 1000000 (bytes); got {text!r}")
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get((match.group(2) or "").lower(), 1)
    size = int(match.group(1)) * scale
    if size < 1024:
        raise ValueError(f"a size of at least 1 KiB; got {text!r}")
    return size


def _command(value: str | None) -> tuple[str, ...]:
    """A command flag (``--server``, ``--setup``) as an argv; unset: ()."""
    if not value:
        return ()
    from mcp_replay_action.transport.process import split_command

    return tuple(split_command(value))


def _shard(value: str | None) -> tuple[int, int] | None:
    if not value:
        return None
    from mcp_replay_action.replay.shard import parse_shard

    return parse_shard(value)


# ---------------------------------------------------------------------------------------------
# the action inputs' cleaners
# ---------------------------------------------------------------------------------------------

_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
GRADES = ("A", "B", "C", "D", "F")
MAX_TIMEOUT = 3600.0


def bad_input(name: str, value: str, allowed: str) -> ConfigError:
    """The one-line error for input ``name``'s ``value`` (shortened), saying what it accepts."""
    shown = value if len(value) <= 60 else value[:57] + "..."
    return ConfigError(f"input {name}: {shown!r} is not valid; expected {allowed}")


def clean_server(value: str, name: str = "server") -> tuple[str, ...]:
    """The stdio command, split like a POSIX shell would (quotes kept together)."""
    if not value:
        return ()
    try:
        parts = tuple(shlex.split(value))
    except ValueError as exc:
        raise bad_input(name, value, f"a command line ({exc})") from None
    return parts


def clean_setup(value: str) -> tuple[str, ...]:
    """The ``setup`` command, split like ``server``; empty: none."""
    return clean_server(value.strip(), "setup")


def clean_reset(value: str) -> tuple[str, ...]:
    """The ``reset`` command, split like ``server``; empty: none."""
    return clean_server(value.strip(), "reset")


def clean_url(value: str) -> str | None:
    """An http(s) URL; empty: None (a stdio server)."""
    if not value:
        return None
    if not re.match(r"https?://[^\s/]+", value) or any(c.isspace() for c in value):
        raise bad_input("url", value, "an http:// or https:// URL")
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
        if os.path.isabs(bare) or ".." in bare.replace(os.sep, "/").split("/"):
            raise bad_input("cassettes", pattern, "glob patterns relative to the workspace, without '..'")
        patterns.append(pattern)
    if not [p for p in patterns if not p.startswith("!")]:
        raise bad_input("cassettes", value, "at least one glob pattern such as cassettes/**/*.jsonl")
    return tuple(patterns)


def clean_path(name: str, value: str, workspace: Path) -> Path:
    """An absolute path that stays inside the workspace (symlinks resolved)."""
    if "\x00" in value:
        raise bad_input(name, value.replace("\x00", "\\0"), "a path inside the workspace")
    path = (workspace / value).resolve()
    if not path.is_relative_to(workspace):
        raise bad_input(name, value, "a path inside the workspace")
    return path


def clean_working_directory(value: str, workspace: Path) -> Path:
    path = clean_path("working-directory", value or ".", workspace)
    if not path.is_dir():
        raise ConfigError(f"input working-directory: {value!r} is not a directory in the workspace")
    return path


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


def clean_list(value: str) -> tuple[str, ...]:
    """Items one a line or comma-separated."""
    items = (item.strip() for line in value.splitlines() for item in line.split(","))
    return tuple(item for item in items if item)


def clean_bool(name: str, value: str) -> bool:
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise bad_input(name, value, "true or false")


def clean_min_grade(value: str) -> str | None:
    if not value:
        return None
    grade = value.upper()
    if grade not in GRADES:
        raise bad_input("min-grade", value, "one of " + ", ".join(GRADES) + " (or empty for no grade gate)")
    return grade


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
        raise bad_input("min-coverage", value, "a percentage from 0 to 100, such as 80")
    return percent


def clean_era(value: str) -> str:
    """``era``: ``recorded`` (empty), ``handshake`` or ``stateless``."""
    era = value.strip().lower() or "recorded"
    if era not in ERAS:
        raise bad_input("era", value, "one of recorded, handshake, stateless")
    return era


def clean_fail_on(value: str, fail_on_regression: str) -> str:
    """``fail-on``; the older ``fail-on-regression: true`` means ``any`` and ``false`` means
    ``none`` when ``fail-on`` is left at its default."""
    from mcp_replay_action.model.gate import DEFAULT_FAIL_ON, FAIL_ON

    fail_on = value.lower()
    if fail_on not in FAIL_ON:
        raise bad_input("fail-on", value, "one of " + ", ".join(FAIL_ON))
    if not fail_on_regression or fail_on != DEFAULT_FAIL_ON:
        return fail_on
    return "any" if clean_bool("fail-on-regression", fail_on_regression) else "none"


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


def clean_timeout(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise bad_input("timeout", value, f"a number of seconds between 0 and {MAX_TIMEOUT:g}") from None
    if not 0 < seconds <= MAX_TIMEOUT:
        raise bad_input("timeout", value, f"a number of seconds between 0 and {MAX_TIMEOUT:g}")
    return seconds


def clean_max_message_size(value: str) -> int:
    try:
        return parse_size(value)
    except ValueError as exc:
        raise bad_input("max-message-size", value, str(exc).split("; got")[0]) from None


def clean_factor(name: str, value: str) -> float | None:
    """``max-slowdown``, ``max-growth``: a factor above 1; empty: latency (size) is not checked."""
    if not value:
        return None
    try:
        factor = float(value)
    except ValueError:
        factor = 0.0
    if not 1 < factor <= 1e6:
        raise bad_input(name, value, "a factor above 1, such as 3")
    return factor


def clean_shard(value: str) -> tuple[int, int] | None:
    """``shard``: ``i/n`` (a matrix job's share of the cassettes); empty: every cassette."""
    try:
        return _shard(value)
    except ConfigError as exc:
        raise ConfigError(f"input shard: {exc}") from None


def clean_jobs(value: str) -> int:
    """``jobs``: a count from 1 to 256 or ``auto``; empty: 1."""
    try:
        return parse_jobs(value or "1")
    except ConfigError as exc:
        raise ConfigError(f"input jobs: {exc}") from None


def _text(clean: Callable[[str], object]) -> Callable[[str, Inputs], object]:
    """A cleaner that reads only its own text."""
    return lambda value, _inputs: clean(value)


def _named(clean: Callable[[str, str], object], name: str) -> Callable[[str, Inputs], object]:
    """A cleaner that names its input in its error."""
    return lambda value, _inputs: clean(name, value)


# ---------------------------------------------------------------------------------------------
# the table, in the order ``mcp-replay replay --help`` lists the options
# ---------------------------------------------------------------------------------------------

ENV_HELP = "Extra environment (repeatable); every value is redacted wherever it shows up, unless --env-public."
DEFAULT_CASSETTES = "cassettes/**/*.jsonl\ncassettes/**/*.json"

# replay also answers to mcp-recorder's verify spellings (--target-stdio, --target, --target-env,
# --ignore-fields, --ignore-paths), so a CI line written for mcp-recorder runs unchanged.
OPTIONS: tuple[Option, ...] = (
    Option(
        "server",
        ("--server", "--target-stdio"),
        "server",
        clean=_text(clean_server),
        help="Command that starts a stdio MCP server.",
        metavar="CMD",
        from_flag=_command,
    ),
    Option(
        "url",
        ("--url",),
        "url",
        clean=_text(clean_url),
        help="Streamable HTTP endpoint of the MCP server.",
        metavar="URL",
    ),
    Option(
        "recorder_url",
        ("--target",),
        help="mcp-recorder's spelling, with its meaning: URL + /mcp unless it ends in /mcp.",
        metavar="URL",
    ),
    Option(
        "headers",
        ("--header",),
        "headers",
        clean=_text(clean_headers),
        help="HTTP header (repeatable; never printed).",
        metavar="'Name: value'",
        multiple=True,
        from_flag=lambda pairs: tuple(parse_headers(pairs).items()),
    ),
    Option(
        "cassettes",
        ("--cassette",),
        "cassettes",
        DEFAULT_CASSETTES,
        clean=_text(clean_cassettes),
        help="Cassette file or glob (repeatable).",
        multiple=True,
        required=True,
        from_flag=tuple,
    ),
    Option(
        "cwd",
        ("--cwd",),
        "working-directory",
        ".",
        clean=lambda value, inputs: clean_working_directory(value, inputs.workspace),
        setting="working_directory",
        help="Working directory for the server.",
        type=lambda: click.Path(file_okay=False),
    ),
    Option(
        "env",
        ("--env", "--target-env"),
        "env",
        clean=_text(clean_env),
        help=ENV_HELP,
        metavar="KEY=VALUE",
        multiple=True,
        from_flag=lambda pairs: tuple(parse_env(pairs).items()),
    ),
    Option(
        "env_public",
        ("--env-public",),
        "env-public",
        clean=_text(clean_list),
        help="An --env variable whose value may be shown and recorded as it is (repeatable).",
        metavar="NAME",
        multiple=True,
        from_flag=tuple,
    ),
    Option(
        "isolate",
        ("--isolate",),
        help="Give the server a fresh temporary HOME and TMPDIR.",
        is_flag=True,
        default=False,
    ),
    Option(
        "setup",
        ("--setup",),
        "setup",
        clean=_text(clean_setup),
        help="Run CMD (split like the server command; in its directory and environment) to completion before "
        "each server start, e.g. to reset a memory file or a database to the recorded state.",
        metavar="CMD",
        from_flag=_command,
    ),
    Option(
        "reset",
        ("--reset",),
        "reset",
        clean=_text(clean_reset),
        help="With --url: run CMD (like --setup) before each pass, so the confirmation pass meets a server as "
        "fresh as the first pass did; without it (or --setup) a --url server is replayed once.",
        metavar="CMD",
        from_flag=_command,
    ),
    Option(
        "min_grade",
        ("--min-grade",),
        "min-grade",
        clean=_text(clean_min_grade),
        help="Also fail below this grade.",
        type=lambda: click.Choice(list(GRADES)),
    ),
    Option(
        "min_coverage",
        ("--min-coverage",),
        "min-coverage",
        clean=_text(clean_min_coverage),
        help="Also fail when fewer than PCT percent of the tools, prompts and resource templates the live"
        " server lists are called by some cassette (the uncovered ones are named).",
        type=lambda: click.FloatRange(0, 100),
        metavar="PCT",
    ),
    Option(
        "fail_on",
        ("--fail-on",),
        "fail-on",
        "breaking",
        # The action's older spelling is read here, with its meaning (``clean_fail_on``).
        clean=lambda value, inputs: clean_fail_on(value, inputs.raw("fail-on-regression")),
        help="Which changes fail the run: breaking ones and missing responses (the default), any "
        "non-cosmetic one, or none (only report).",
        type=lambda: click.Choice(["breaking", "any", "none"]),
    ),
    Option(
        "fail_on_regression",
        ("--fail-on-regression",),
        "fail-on-regression",
        setting=None,  # no cleaner of its own: fail-on's reads it (``clean_fail_on``)
        help="The same as --fail-on any.",
        is_flag=True,
        default=False,
        from_flag=lambda on: True if on else None,
    ),
    Option(
        "ignore_paths",
        ("--ignore-path", "--ignore-paths"),
        "ignore-paths",
        clean=_text(clean_list),
        help="Ignore a response path, e.g. result.content[].text.",
        metavar="PATH",
        multiple=True,
        from_flag=tuple,
    ),
    Option(
        "ignore_keys",
        ("--ignore-key", "--ignore-fields"),
        "ignore-keys",
        clean=_text(clean_list),
        help="Ignore a key at any depth.",
        metavar="KEY",
        multiple=True,
        from_flag=tuple,
    ),
    Option(
        "ignore_notifications",
        ("--ignore-notifications",),
        "ignore-notifications",
        clean=_text(clean_list),
        help="Leave a server notification method (or a request to the client) out of the comparison, e.g."
        " notifications/progress or progress, notifications/message (docs/replay.md).",
        metavar="METHOD",
        multiple=True,
        from_flag=tuple,
    ),
    Option(
        "allow_reorder",
        ("--allow-reorder",),
        "allow-reorder",
        "false",
        clean=_named(clean_bool, "allow-reorder"),
        help="A list with the same members in another order still matches.",
        is_flag=True,
        default=False,
    ),
    Option(
        "confirm",
        ("--confirm/--no-confirm",),
        help="When an interaction differs, replay once more against a fresh start and report what differs "
        "between the two live runs as noise (not gating).",
        default=True,
        show_default=True,
    ),
    Option(
        "timeout",
        ("--timeout",),
        "timeout",
        "30",
        clean=_text(clean_timeout),
        help="Seconds per request.",
        type=lambda: Seconds(min=0.1, max=3600),
        default=REQUEST_TIMEOUT,
        show_default=True,
    ),
    Option(
        "startup_timeout",
        ("--startup-timeout",),
        help="Seconds for the first answer (default: --timeout, at least 30).",
        type=lambda: Seconds(min=0.1, max=3600),
    ),
    Option(
        "max_message",
        ("--max-message-size",),
        "max-message-size",
        "128MiB",
        clean=_text(clean_max_message_size),
        help="The longest message read from the server (a stdio line, an HTTP body, an SSE event); "
        "a longer one is dropped and reported, never held whole.",
        type=Size,
        default="128MiB",
        show_default=True,
        metavar="SIZE",
        from_flag=lambda size: parse_size(size) if isinstance(size, str) else size,
    ),
    Option(
        "total_timeout",
        ("--total-timeout",),
        help="Seconds per cassette.",
        type=lambda: Seconds(min=1, max=86400),
        default=900.0,
        show_default=True,
    ),
    Option(
        "redact_keys",
        ("--redact",),
        help="Also redact values under KEY.",
        metavar="KEY",
        multiple=True,
        from_flag=tuple,
    ),
    Option(
        "redact_patterns",
        ("--redact-pattern",),
        help="Also redact matches of REGEX.",
        metavar="REGEX",
        multiple=True,
        from_flag=tuple,
    ),
    Option(
        "thread",
        ("--thread",),
        "thread",
        clean=_named(clean_thread_rules, "thread"),
        help="Thread the value at this answer key (any depth) or path into later requests that quote it, "
        "whatever its length (repeatable; see docs/threading.md).",
        metavar="KEY|PATH",
        multiple=True,
        from_flag=tuple,
    ),
    Option(
        "no_thread",
        ("--no-thread",),
        "no-thread",
        clean=_named(clean_thread_rules, "no-thread"),
        help="Never thread a value found at this answer key or path (repeatable).",
        metavar="KEY|PATH",
        multiple=True,
        from_flag=tuple,
    ),
    Option(
        "max_slowdown",
        ("--max-slowdown",),
        "max-slowdown",
        clean=_named(clean_factor, "max-slowdown"),
        help="Flag an answer that took more than X times its recorded latency (and over 50 ms) as a latency finding.",
        type=lambda: click.FloatRange(min=1.0, min_open=True, max=1e6),
        metavar="X",
    ),
    Option(
        "max_growth",
        ("--max-growth",),
        "max-growth",
        clean=_named(clean_factor, "max-growth"),
        help="Flag an answer more than X times its recorded size in bytes (and over 1 KiB) as a size finding.",
        type=lambda: click.FloatRange(min=1.0, min_open=True, max=1e6),
        metavar="X",
    ),
    Option(
        "era",
        ("--era",),
        "era",
        "recorded",
        clean=_text(clean_era),
        help="Send each cassette in this protocol era: a handshake-era recording translated to the"
        " stateless 2026-07-28 revision or the reverse, answers compared by meaning (docs/eras.md).",
        type=lambda: click.Choice(ERAS),
        default="recorded",
        show_default=True,
    ),
    Option(
        "repeat",
        ("--repeat",),
        help="Send each side-effect-free request (tools/list, resources/read, a tool annotated"
        " readOnlyHint) N times and report the median latency.",
        type=lambda: click.IntRange(1, 100),
        default=1,
        show_default=True,
    ),
    Option(
        "shard",
        ("--shard",),
        "shard",
        clean=_text(clean_shard),
        help="Replay only shard I of N: a deterministic share of the cassettes, balanced by interaction"
        " count (combine the shards' --report files with 'mcp-replay merge').",
        metavar="I/N",
        from_flag=_shard,
    ),
    Option(
        "jobs",
        ("--jobs",),
        "jobs",
        "1",
        clean=_text(clean_jobs),
        help="Replay N cassettes at once, each with its own server (auto: one per core); safe only when"
        " no two servers share state (files, ports, a database).  [default: 1]",
        type=Jobs,
        default="1",
        metavar="N|auto",
        from_flag=lambda jobs: parse_jobs(jobs) if isinstance(jobs, str) else jobs,
    ),
    Option(
        "update",
        ("--update",),
        help="Intentional change: rewrite each cassette's changed responses with the live ones (redacted; "
        "a request with no live response keeps its recording). Exits 0 once every change is rewritten.",
        is_flag=True,
        default=False,
    ),
)

BY_KEY: dict[str, Option] = {row.key: row for row in OPTIONS}
# The action inputs the table holds, by name.
BY_INPUT: dict[str, Option] = {row.input: row for row in OPTIONS if row.input}


def shared_option(key: str, flags: Sequence[str] = (), **changes: object) -> Callable[[Decorated], Decorated]:
    """Row ``key`` as a click option, for a command that shares it (``flags``: fewer spellings)."""
    return BY_KEY[key].click_option(flags, **changes)


def from_flags(params: Mapping[str, object]) -> dict[str, Any]:
    """The values of a command's parsed options (``params``): each row's ``from_flag`` applied to
    the parameter of its name (the others are left out)."""
    return {key: BY_KEY[key].from_flag(value) for key, value in params.items() if key in BY_KEY}


def from_inputs(inputs: Inputs) -> dict[str, Any]:
    """The values of the action inputs the table holds, each cleaned, keyed by its settings field."""
    values: dict[str, Any] = {}
    for row in OPTIONS:
        if row.input is None or row.clean is None:
            continue
        value = row.clean(inputs.raw(row.input), inputs)
        if row.field is not None:
            values[row.field] = value
    return values


def plan_from(
    values: Mapping[str, object],
    *,
    root: str,
    confine: bool = False,
    mode: Mode | None = None,
    command: str = "replay",
    target: Target | None = None,
    paths: Sequence[str] | None = None,
) -> Plan:
    """The ``Plan`` that ``values`` describe (``options.OPTIONS``' keys; a key left out has its
    row's default), whichever edge read them: the ``replay`` command's flags
    (``options.from_flags``) or the action's inputs (``Settings.plan``). Cassette patterns are
    resolved against ``root``, and with ``confine`` must stay inside it (the action's
    workspace); ``mode`` (default: ``update`` with ``values["update"]``, else ``check``);
    ``target``: ``target_from(values)`` made already (the CLI starts its server meanwhile);
    ``paths``: the cassettes, named already (``calibrate`` takes one file, not patterns)."""
    from mcp_replay_action.compare.correlate import ThreadRules
    from mcp_replay_action.compare.options import CompareOptions
    from mcp_replay_action.errors import ConfigError
    from mcp_replay_action.host.discovery import find_cassettes
    from mcp_replay_action.model.gate import GatePolicy, fail_on_from_flags

    value = _reader(values)

    target = target or target_from(values, command)
    what = "input cassettes" if confine else "--cassette"
    if paths is None:
        paths = find_cassettes(value("cassettes"), root, confine=confine, what=what)
    paths = tuple(paths)
    if value("shard") is not None:
        from mcp_replay_action.replay.shard import share

        paths = share(paths, *value("shard"))
    mode = mode or ("update" if value("update") else "check")
    era = value("era")
    if era != "recorded" and mode != "check":
        # An update keeps each cassette's own era, so it cannot send another one.
        raise ConfigError(f"--era {era} cannot be combined with --update: re-record the cassette in that era")
    timeout = value("timeout")
    thread, no_thread = tuple(value("thread")), tuple(value("no_thread"))
    if thread or no_thread:
        ThreadRules(thread, no_thread)  # a rule that cannot be read is a usage error before any server starts
    return Plan(
        paths=paths,
        target=target,
        compare=CompareOptions(
            ignore_paths=tuple(value("ignore_paths")),
            ignore_keys=tuple(value("ignore_keys")),
            ignore_notifications=tuple(value("ignore_notifications")),
            allow_reorder=bool(value("allow_reorder")),
            budget=timeout,  # a comparison has the request's time
        ),
        gate=GatePolicy(
            fail_on=fail_on_from_flags(value("fail_on"), bool(value("fail_on_regression"))),
            min_grade=value("min_grade"),
            min_coverage=value("min_coverage"),
        ),
        mode=mode,
        era=era,
        timeout=timeout,
        total_timeout=value("total_timeout"),
        redact_keys=tuple(value("redact_keys")),
        redact_patterns=tuple(value("redact_patterns")),
        public_env=tuple(value("env_public")),
        root=root,
        jobs=value("jobs"),
        max_slowdown=value("max_slowdown"),
        max_growth=value("max_growth"),
        repeat=value("repeat"),
        confirm=bool(value("confirm")),
        thread=thread,
        no_thread=no_thread,
    )


def _reader(values: Mapping[str, object]) -> Callable[[str], Any]:
    """``plan_from``'s and ``target_from``'s reader of ``values``: a row's value by its key, the
    row's default when left out (typed as the row's: only the key says which)."""
    return lambda key: values[key] if key in values else BY_KEY[key].value_default


def target_from(values: Mapping[str, object], command: str = "replay") -> Target:
    """The ``Target`` the server options among ``values`` describe (``plan_from``'s keys)."""
    from mcp_replay_action.errors import ConfigError

    value = _reader(values)

    url = value("url")
    if value("recorder_url"):
        if url:
            raise ConfigError("give --url or --target, not both")
        from mcp_replay_action.transport import recorder_endpoint

        url = recorder_endpoint(value("recorder_url"))
    cwd = value("cwd")
    return make_target(
        value("server"),
        url,
        dict(value("headers")),
        str(cwd) if cwd is not None else None,
        dict(value("env")),
        bool(value("isolate")),
        startup_timeout_for(value("timeout"), value("startup_timeout")),
        setup=value("setup"),
        reset=value("reset"),
        command=command,
        max_message=value("max_message"),
    )
