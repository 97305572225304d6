"""The pytest plugin: cassettes as test fixtures, from both sides of the wire.

Installed with the package and registered under the ``pytest11`` entry point ``mcp_replay``, so
it is active in any environment that has ``mcp-replay-action`` installed (``-p no:mcp_replay``
turns it off). Importing it costs nothing beyond pytest itself: every heavy module (the mock
server, the replay engine, the transports, deepdiff) is imported inside the fixture that needs it.

Mark a test (or a class, or a module through ``pytestmark``) with a cassette::

    @pytest.mark.mcp_cassette("cassettes/calc.jsonl", ignore_keys=("requestId",))

``path`` is resolved against the directory of the test file that holds the test (an absolute
path is used as it is), so a test and its cassettes move together. The keyword options are the
replay comparison's (``ignore_keys``, ``ignore_paths``, ``allow_reorder``) and the mock server's
matcher (``match``: ``method_params``, ``sequential`` or ``strict``).

Fixtures:

- ``mcp_replay_mock_url``: the cassette served by a mock MCP server over Streamable HTTP on
  127.0.0.1 (an ephemeral port, one server per test, stopped after it); the value is its URL.
- ``mcp_replay_server``: that mock server itself, for its ``stats`` (answered, unmatched).
- ``mcp_replay_stdio``: the argv of a stdio mock server for the cassette, for clients that spawn
  their server (``[python, "-m", "mcp_replay_action", "serve", "--cassette", PATH, ...]``).
- ``mcp_replay_verify``: the cassette replayed against the server named by
  ``--mcp-replay-target URL`` or ``--mcp-replay-target-stdio CMD``; the value is the
  ``CassetteResult``. Without either option the test is skipped.
  ``assert_no_regressions(result)`` fails with the console report's findings.

``--mcp-replay-record-mode`` says what a missing cassette means: ``none`` (the default) makes the
test an error naming the path it looked for; ``auto`` skips the test instead, for suites whose
cassettes are recorded later (recording needs a real client, so the plugin never records).

mcp-recorder's spellings (``--mcp-target``, ``--mcp-target-stdio``, ``--mcp-record-mode``,
``--mcp-timeout``, the fixtures ``mcp_replay_url`` and ``mcp_verify_result``, the marker option
``ignore_fields``) work too, so a suite moves over unchanged; when mcp-recorder is installed as
well, its plugin keeps those names and this one answers to its own only, so the two never collide.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

if TYPE_CHECKING:  # only for annotations: none of these load when the plugin does
    from mcp_replay_action.cassette import Cassette
    from mcp_replay_action.results import CassetteResult
    from mcp_replay_action.serve import MockHttpServer

MARKER = "mcp_cassette"
RECORD_MODES = ("none", "auto")
# Kept here, not imported from serve.py, so that validating a marker loads nothing heavy; a test
# in tests/test_pytest_plugin.py keeps the two lists the same.
MATCHERS = ("method_params", "sequential", "strict")
_MARKER_HELP = (
    f"{MARKER}(path, ignore_keys=(), ignore_paths=(), allow_reorder=False, match='method_params'): "
    "the MCP cassette the mcp_replay_url, mcp_replay_stdio and mcp_verify_result fixtures use "
    "(path relative to the test file's directory)"
)
# ``ignore_fields`` is mcp-recorder's name for ``ignore_keys`` (field names ignored at any depth).
_OPTIONS = ("ignore_keys", "ignore_fields", "ignore_paths", "allow_reorder", "match")


@dataclass(frozen=True)
class CassetteSpec:
    """What an ``mcp_cassette`` marker asked for, with its path resolved."""

    path: Path
    ignore_keys: tuple[str, ...] = ()
    ignore_paths: tuple[str, ...] = ()
    allow_reorder: bool = False
    match: str = "method_params"


def recorder_installed() -> bool:
    """Whether mcp-recorder is installed: its pytest plugin then owns the shared spellings
    (``--mcp-target``, ``--mcp-target-stdio``, ``--mcp-record-mode``, ``mcp_replay_url``,
    ``mcp_verify_result``), and this plugin answers to its own names only."""
    return importlib.util.find_spec("mcp_recorder") is not None


def pytest_addoption(parser: pytest.Parser) -> None:
    """The plugin's command-line options, grouped under "MCP cassettes" in ``pytest --help``.
    Each has an ``--mcp-replay-`` name; mcp-recorder's spelling is an alias unless mcp-recorder
    itself is installed (two plugins cannot both own one option)."""
    group = parser.getgroup("mcp-replay", "MCP cassettes (mcp-replay-action)")
    shared = not recorder_installed()

    def option(ours: str, theirs: str, **kwargs: Any) -> None:
        names = [ours, theirs] if shared else [ours]
        group.addoption(*names, dest=ours.lstrip("-").replace("-", "_"), **kwargs)

    option(
        "--mcp-replay-target",
        "--mcp-target",
        metavar="URL",
        default=None,
        help="Streamable HTTP endpoint of the MCP server the mcp_replay_verify fixture replays cassettes against.",
    )
    option(
        "--mcp-replay-target-stdio",
        "--mcp-target-stdio",
        metavar="CMD",
        default=None,
        help="Command that starts a stdio MCP server for mcp_replay_verify (split like a POSIX shell; "
        "a fresh server per test).",
    )
    option(
        "--mcp-replay-record-mode",
        "--mcp-record-mode",
        choices=RECORD_MODES,
        default="none",
        help="What a missing cassette means: 'none' (default) makes the test an error, 'auto' skips it.",
    )
    option(
        "--mcp-replay-timeout",
        "--mcp-timeout",
        metavar="SECONDS",
        type=float,
        default=30.0,
        help="mcp_replay_verify: seconds to wait for each response, and for the server's first one (default 30).",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker (so ``--strict-markers`` accepts it) and refuse contradictory options."""
    config.addinivalue_line("markers", _MARKER_HELP)
    if config.getoption("mcp_replay_target", None) and config.getoption("mcp_replay_target_stdio", None):
        raise pytest.UsageError(
            "--mcp-replay-target and --mcp-replay-target-stdio are mutually exclusive: give one server"
        )
    timeout = config.getoption("mcp_replay_timeout", 30.0)
    if timeout is not None and timeout <= 0:
        raise pytest.UsageError(f"--mcp-replay-timeout must be a positive number of seconds, got {timeout:g}")


# ---------------------------------------------------------------------------------------------
# the marker
# ---------------------------------------------------------------------------------------------


def cassette_spec(request: pytest.FixtureRequest, fixture: str) -> CassetteSpec:
    """The closest ``mcp_cassette`` marker of the requesting test, validated; a bad or absent
    marker fails the test's setup with a one-line message naming the fixture."""
    marker = request.node.get_closest_marker(MARKER)
    if marker is None:
        _fail(f"{fixture} needs a cassette: mark the test with @pytest.mark.{MARKER}('path/to/cassette.jsonl')")
    args = list(marker.args)
    kwargs = dict(marker.kwargs)
    if "path" in kwargs:
        args.insert(0, kwargs.pop("path"))
    if len(args) != 1 or not isinstance(args[0], str | os.PathLike) or not str(args[0]):
        _fail(f"@pytest.mark.{MARKER} takes one cassette path, got {marker.args!r}")
    unknown = sorted(set(kwargs) - set(_OPTIONS))
    if unknown:
        _fail(f"@pytest.mark.{MARKER}: unknown option(s) {', '.join(unknown)} (known: {', '.join(_OPTIONS)})")
    match = kwargs.get("match", "method_params")
    if match not in MATCHERS:
        _fail(f"@pytest.mark.{MARKER}: unknown match {match!r} (expected one of: {', '.join(MATCHERS)})")
    path = Path(os.fspath(args[0]))
    if not path.is_absolute():
        path = Path(request.path).parent / path
    return CassetteSpec(
        path=path,
        ignore_keys=_strings(kwargs.get("ignore_keys", ()), "ignore_keys")
        + _strings(kwargs.get("ignore_fields", ()), "ignore_fields"),
        ignore_paths=_strings(kwargs.get("ignore_paths", ()), "ignore_paths"),
        allow_reorder=bool(kwargs.get("allow_reorder", False)),
        match=str(match),
    )


def _strings(value: Any, name: str) -> tuple[str, ...]:
    # A lone string is one key, not a sequence of one-letter keys.
    items = (value,) if isinstance(value, str) else value
    try:
        out = tuple(items)
    except TypeError:
        _fail(f"@pytest.mark.{MARKER}: {name} must be a list of strings, got {value!r}")
    if not all(isinstance(item, str) for item in out):
        _fail(f"@pytest.mark.{MARKER}: {name} must be a list of strings, got {value!r}")
    return out


def _existing(spec: CassetteSpec, config: pytest.Config) -> Path:
    """The cassette's path if the file is there; else an error, or a skip under ``auto``."""
    if spec.path.is_file():
        return spec.path
    if config.getoption("mcp_replay_record_mode") == "auto":
        pytest.skip(f"cassette {spec.path} is not recorded yet (--mcp-replay-record-mode=auto)")
    _fail(
        f"cassette {spec.path} does not exist (paths in @pytest.mark.{MARKER} are relative to the test file's "
        "directory); record it with `mcp-replay record`, or run with --mcp-replay-record-mode=auto to skip such tests"
    )


def _load(spec: CassetteSpec, config: pytest.Config) -> Cassette:
    from mcp_replay_action.cassette import load
    from mcp_replay_action.errors import ReplayError

    path = _existing(spec, config)
    try:
        return load(path)
    except ReplayError as exc:
        problem = exc.one_line()
    _fail(f"cannot use the cassette: {problem}")  # outside ``except``: no chained traceback


def _fail(message: str) -> NoReturn:
    # pytrace=False: the message is the whole story; a traceback into the plugin would bury it.
    pytest.fail(message, pytrace=False)


# ---------------------------------------------------------------------------------------------
# fixtures: the cassette as a mock server (testing a client)
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def mcp_replay_server(request: pytest.FixtureRequest) -> Iterator[MockHttpServer]:
    """A mock MCP server answering from the marked cassette over Streamable HTTP on 127.0.0.1
    (ephemeral port), running for the duration of the test."""
    from mcp_replay_action.serve import MockHttpServer

    # Named after what the test asked for: most tests ask for the URL, which needs this fixture.
    asked = next((name for name in URL_FIXTURES if name in request.fixturenames), "mcp_replay_server")
    spec = cassette_spec(request, asked)
    cassette = _load(spec, request.config)
    mock = MockHttpServer(cassette, "127.0.0.1", 0, match=spec.match).start()
    try:
        yield mock
    finally:
        mock.stop()


def _mock_url(mcp_replay_server: MockHttpServer) -> str:
    """The URL (``http://127.0.0.1:PORT/mcp``) of the mock server for the marked cassette."""
    return mcp_replay_server.url


mcp_replay_mock_url = pytest.fixture(name="mcp_replay_mock_url")(_mock_url)


@pytest.fixture
def mcp_replay_stdio(request: pytest.FixtureRequest) -> list[str]:
    """The argv of a stdio mock server for the marked cassette; the client spawns (and ends) it."""
    spec = cassette_spec(request, "mcp_replay_stdio")
    path = _existing(spec, request.config)
    argv = [sys.executable, "-m", "mcp_replay_action", "serve", "--cassette", str(path)]
    if spec.match != "method_params":
        argv += ["--match", spec.match]
    return argv


# ---------------------------------------------------------------------------------------------
# fixtures: the cassette replayed against a server (testing a server)
# ---------------------------------------------------------------------------------------------


def _verify(request: pytest.FixtureRequest) -> CassetteResult:
    """The marked cassette replayed against ``--mcp-replay-target URL`` or
    ``--mcp-replay-target-stdio CMD`` (a fresh connection or server process per test), compared
    with the marker's options."""
    config = request.config
    spec = cassette_spec(request, request.fixturename or "mcp_replay_verify")
    url = config.getoption("mcp_replay_target")
    command = config.getoption("mcp_replay_target_stdio")
    cassette = _load(spec, config)

    from mcp_replay_action.compare import CompareOptions
    from mcp_replay_action.errors import ReplayError

    # A bad ignore path is reported even when there is no server to verify against.
    try:
        compare = CompareOptions(
            ignore_paths=spec.ignore_paths, ignore_keys=spec.ignore_keys, allow_reorder=spec.allow_reorder
        )
    except ReplayError as exc:
        problem = exc.one_line()
    else:
        problem = ""
    if problem:
        _fail(f"@pytest.mark.{MARKER}: {problem}")
    if not url and not command:
        pytest.skip("no MCP server to verify against: pass --mcp-replay-target URL or --mcp-replay-target-stdio CMD")

    from mcp_replay_action.replay import ReplayOptions, replay_cassette
    from mcp_replay_action.transport import Target, open_transport

    timeout = float(config.getoption("mcp_replay_timeout"))
    try:
        # A URL wins over a command: a running server, nothing to start.
        target = Target(url=url, startup_timeout=timeout) if url else Target(command=command, startup_timeout=timeout)
        transport = open_transport(target)
        options = ReplayOptions(timeout=timeout, startup_timeout=timeout, compare=compare)
        return replay_cassette(cassette, transport, options)
    except ReplayError as exc:
        failure = _server_failure(exc, url or command)
    _fail(failure)


mcp_replay_verify = pytest.fixture(name="mcp_replay_verify")(_verify)

# mcp-recorder's fixture names, for suites moving over from it; left to mcp-recorder itself when
# it is installed (a second fixture of the same name would silently replace one of the two).
URL_FIXTURES = ("mcp_replay_mock_url",) if recorder_installed() else ("mcp_replay_mock_url", "mcp_replay_url")
if not recorder_installed():
    mcp_replay_url = pytest.fixture(name="mcp_replay_url")(_mock_url)
    mcp_verify_result = pytest.fixture(name="mcp_verify_result")(_verify)


def _server_failure(exc: Exception, target: str) -> str:
    from mcp_replay_action.errors import ServerError

    message = f"mcp_replay_verify against {target}: {' '.join(str(exc).split())}"
    # The message often ends with the last line of stderr already; more is worth showing.
    if isinstance(exc, ServerError) and exc.stderr_tail.strip() and exc.stderr_tail.strip() not in message:
        tail = exc.stderr_tail.strip().splitlines()[-10:]
        message += "\nserver stderr (last lines):\n" + "\n".join("  " + line for line in tail)
    return message


def assert_no_regressions(result: CassetteResult, *, verbose: bool = False) -> None:
    """Raise ``AssertionError`` when any interaction failed or got no answer; the message is the
    console report of the cassette (every failure with its findings and diffs)."""
    __tracebackhide__ = True  # pytest shows the test's line, not this helper's
    if not result.failed and not result.missing:
        return
    from mcp_replay_action.assemble import build_report
    from mcp_replay_action.report import console

    text = console.render(build_report([result]), verbose=verbose).rstrip("\n")
    raise AssertionError(f"{result.failed} regression(s) and {result.missing} missing response(s)\n{text}")
