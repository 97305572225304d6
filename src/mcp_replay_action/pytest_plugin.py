"""The pytest plugin: cassettes as test fixtures, from both sides of the wire.

Installed with the package and registered under the ``pytest11`` entry point ``mcp_replay``, so
it is active in any environment that has ``mcp-replay-action`` installed (``-p no:mcp_replay``
turns it off). Importing it costs nothing beyond pytest itself: every heavy module (the mock
server, the replay engine, the transports, deepdiff) is imported inside the fixture that needs it.

Mark a test (or a class, or a module through ``pytestmark``) with a cassette::

    @pytest.mark.mcp_cassette("cassettes/calc.jsonl", ignore_keys=("requestId",))

``path`` is resolved against the directory of the test file that holds the test (an absolute
path is used as it is), so a test and its cassettes move together. The keyword options are the
replay comparison's (``ignore_keys``, ``ignore_paths``, ``allow_reorder``), the mock server's
matcher (``match``: ``method_params``, ``sequential`` or ``strict``), the server under test
(``server``: a command that starts a stdio server; ``url``: a Streamable HTTP endpoint) and the
protocol era ``mcp_replay_verify`` sends the cassette in (``era``: ``recorded``, ``handshake`` or
``stateless``, as ``mcp-replay replay --era``; docs/eras.md).

The server under test is, first found: ``--mcp-replay-target URL`` / ``--mcp-replay-target-stdio
CMD`` on the command line (replay the suite against another build), the marker's ``server`` /
``url``, the ini keys ``mcp_replay_server`` / ``mcp_replay_server_url``. Its era, the same way:
``--mcp-replay-era``, the marker's ``era``, the ini key ``mcp_replay_era``, else ``recorded``.

Fixtures:

- ``mcp_replay_mock_url``: the cassette served by a mock MCP server over Streamable HTTP on
  127.0.0.1 (an ephemeral port, one server per test, stopped after it); the value is its URL.
- ``mcp_replay_server``: that mock server itself, for its ``stats`` (answered, unmatched).
- ``mcp_replay_stdio``: the argv of a stdio mock server for the cassette, for clients that spawn
  their server (``[python, "-m", "mcp_replay_action", "serve", "--cassette", PATH, ...]``).
- ``mcp_replay_verify``: the cassette replayed against the server under test by the same run as
  ``mcp-replay replay`` (``replay.run``: a failing interaction is confirmed against a fresh start,
  and what differs between the two live runs is noise, not a failure); the value is the
  ``CassetteResult``. With no server named anywhere the test is skipped, saying so.
  ``assert_no_regressions(result)`` applies the CLI's gate (``fail_on="breaking"`` by default)
  and fails with the console report's findings.

``--mcp-replay-update`` (ini ``mcp_replay_update = true``) rewrites each changed answer of the
cassettes ``mcp_replay_verify`` replays with the live one, as ``mcp-replay replay --update`` does,
and the test passes once every change is rewritten (syrupy's ``--snapshot-update``, Jest's ``-u``).

``--mcp-replay-record-mode`` (ini ``mcp_replay_record_mode``) takes VCR.py's record modes, with
VCR.py's meanings, for the fixtures through which the test's own client drives a session
(``mcp_replay_stdio``, and ``mcp_replay_mock_url`` when the server under test is a URL):

- ``none`` (the default): never record; a missing cassette fails the test, naming the path.
- ``once``: a missing cassette is recorded: the fixture hands the client a recording proxy in
  front of the server under test, and the cassette is written when the test ends; an existing
  one is served as recorded.
- ``new_episodes``: as ``once``, and with an existing cassette the session is recorded again and
  every request the cassette lacks (by the ``method_params`` matcher) is added to it; what it
  holds already is kept as it was.
- ``all``: always record; the cassette is replaced by the new recording (once it holds one).

``mcp_replay_verify`` sends only what a cassette holds, so it never records one: under any mode
a missing cassette fails it, saying how to record it. mcp-recorder's ``auto`` (skip a test whose
cassette is missing, with the reason in ``-rs``) is accepted too.

mcp-recorder's spellings (``--mcp-target``, ``--mcp-target-stdio``, ``--mcp-record-mode``,
``--mcp-timeout``, the fixtures ``mcp_replay_url`` and ``mcp_verify_result``, the marker option
``ignore_fields``) work too, so a suite moves over unchanged; when mcp-recorder is installed as
well, its plugin keeps those names and this one answers to its own only, so the two never collide.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import pytest

from mcp_replay_action.wire.protocol import ERAS

if TYPE_CHECKING:  # only for annotations: none of these load when the plugin does
    from mcp_replay_action.model.cassette import Cassette
    from mcp_replay_action.model.results import CassetteResult
    from mcp_replay_action.plan import Plan
    from mcp_replay_action.serve import MockHttpServer

_T = TypeVar("_T")
MARKER = "mcp_cassette"
# VCR.py's record modes (``vcr/record_mode.py``), then mcp-recorder's ``auto``.
RECORD_MODES = ("none", "once", "new_episodes", "all", "auto")
# Kept here, not imported from serve.py, so that validating a marker loads nothing heavy; a test
# in tests/test_pytest_plugin.py keeps the two lists the same.
MATCHERS = ("method_params", "sequential", "strict")
_MARKER_HELP = (
    f"{MARKER}(path, ignore_keys=(), ignore_paths=(), allow_reorder=False, match='method_params', "
    "server=None, url=None, era=None): the MCP cassette the mcp_replay_mock_url, mcp_replay_stdio "
    "and mcp_replay_verify fixtures use (path relative to the test file's directory), the server "
    "under test (a stdio command or a URL) and the protocol era mcp_replay_verify sends it in"
)
# ``ignore_fields`` is mcp-recorder's name for ``ignore_keys`` (field names ignored at any depth).
_OPTIONS = ("ignore_keys", "ignore_fields", "ignore_paths", "allow_reorder", "match", "server", "url", "era")
# Written beside the cassette while a session is recorded, then moved over it (or merged into it).
_RECORDING_SUFFIX = ".recording"
_WRITTEN = pytest.StashKey[list[str]]()


@dataclass(frozen=True)
class CassetteSpec:
    """What an ``mcp_cassette`` marker asked for, with its path resolved."""

    path: Path
    ignore_keys: tuple[str, ...] = ()
    ignore_paths: tuple[str, ...] = ()
    allow_reorder: bool = False
    match: str = "method_params"
    server: str | None = None  # the marker's server under test: a stdio command ...
    url: str | None = None  # ... or a Streamable HTTP endpoint
    era: str | None = None  # the era mcp_replay_verify sends the cassette in (``ERAS``)


@dataclass(frozen=True)
class ServerUnderTest:
    """The server the marked test replays against or records from, and where it was named."""

    url: str | None
    command: str | None
    source: str

    def describe(self) -> str:
        return self.url or self.command or ""


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

    def option(ours: str, theirs: str, **kwargs: object) -> None:
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
        default=None,
        help="VCR.py's record modes: 'none' (default) never records, a missing cassette is an error; "
        "'once' records a missing cassette through mcp_replay_stdio / mcp_replay_mock_url; "
        "'new_episodes' also adds the requests an existing cassette lacks; 'all' records every "
        "cassette again ('auto': mcp-recorder's, skips a test whose cassette is missing).",
    )
    group.addoption(
        "--mcp-replay-update",
        action="store_true",
        default=False,
        dest="mcp_replay_update",
        help="Rewrite the changed answers of each cassette mcp_replay_verify replays with the live ones "
        "(as `mcp-replay replay --update`); the test passes once every change is rewritten.",
    )
    parser.addini(
        "mcp_replay_server", "Command that starts the stdio MCP server under test (the marker's server= wins)."
    )
    parser.addini(
        "mcp_replay_server_url", "Streamable HTTP endpoint of the MCP server under test (the marker's url= wins)."
    )
    parser.addini("mcp_replay_record_mode", "Default --mcp-replay-record-mode.", default="none")
    # mcp-recorder has no era option: this one has no second spelling.
    group.addoption(
        "--mcp-replay-era",
        choices=ERAS,
        default=None,
        dest="mcp_replay_era",
        help="mcp_replay_verify: the protocol era each cassette is sent in, as `mcp-replay replay --era`: "
        "'recorded' (default) as recorded; 'handshake' or 'stateless' translate a recording of the other "
        "era, answers compared by meaning (wins over the marker's era= and the ini key).",
    )
    parser.addini("mcp_replay_era", "Default --mcp-replay-era (the marker's era= wins).", default="recorded")
    # mypy 1.20 takes the string "bool" passed as `type` for a type form; pytest reads it as the ini type
    parser.addini("mcp_replay_update", "Default --mcp-replay-update.", type="bool", default=False)  # type: ignore[maybe-unrecognized-str-typeform]
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
    if config.getoption("mcp_replay_record_mode", None) is None:
        mode = str(config.getini("mcp_replay_record_mode") or "none").strip()
        if mode not in RECORD_MODES:
            raise pytest.UsageError(
                f"ini mcp_replay_record_mode: unknown record mode {mode!r} (expected one of: {', '.join(RECORD_MODES)})"
            )
    era = str(config.getini("mcp_replay_era") or "recorded").strip()
    if era not in ERAS:
        raise pytest.UsageError(f"ini mcp_replay_era: unknown era {era!r} (expected one of: {', '.join(ERAS)})")
    config.stash[_WRITTEN] = []


def record_mode(config: pytest.Config) -> str:
    """The record mode of this run: the command line's, else the ini key's, else ``none``."""
    return str(config.getoption("mcp_replay_record_mode", None) or config.getini("mcp_replay_record_mode") or "none")


def replay_era(config: pytest.Config, spec: CassetteSpec) -> str:
    """The era ``mcp_replay_verify`` sends ``spec``'s cassette in: the command line's, else the
    marker's, else the ini key's, else ``recorded`` (the order the server under test is found in)."""
    return str(
        config.getoption("mcp_replay_era", None)
        or spec.era
        or str(config.getini("mcp_replay_era") or "").strip()
        or "recorded"
    )


def updating(config: pytest.Config) -> bool:
    """Whether this run rewrites changed answers (``--mcp-replay-update`` or the ini key)."""
    return bool(config.getoption("mcp_replay_update", False) or config.getini("mcp_replay_update"))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Name every cassette this run recorded or rewrote: they are files to review and commit."""
    written = config.stash.get(_WRITTEN, [])
    if written:
        terminalreporter.section("mcp-replay: cassettes written")
        for line in written:
            terminalreporter.line(line)


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
    for name in ("server", "url"):
        if kwargs.get(name) is not None and not (isinstance(kwargs[name], str) and kwargs[name].strip()):
            _fail(f"@pytest.mark.{MARKER}: {name} must be a non-empty string, got {kwargs[name]!r}")
    if kwargs.get("server") and kwargs.get("url"):
        _fail(f"@pytest.mark.{MARKER}: give server= (a stdio command) or url= (an HTTP endpoint), not both")
    era = kwargs.get("era")
    if era is not None and era not in ERAS:
        _fail(f"@pytest.mark.{MARKER}: unknown era {era!r} (expected one of: {', '.join(ERAS)})")
    path = Path(os.fspath(args[0]))
    if not path.is_absolute():
        path = Path(request.path).parent / path
    return CassetteSpec(
        server=kwargs.get("server"),
        url=kwargs.get("url"),
        era=era,
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
    if record_mode(config) == "auto":
        pytest.skip(f"cassette {spec.path} is not recorded yet (--mcp-replay-record-mode=auto)")
    _fail(
        f"cassette {spec.path} does not exist (paths in @pytest.mark.{MARKER} are relative to the test file's "
        "directory); record it with a test that drives mcp_replay_stdio or mcp_replay_mock_url under "
        "--mcp-replay-record-mode=once, or with `mcp-replay record`"
    )


def server_under_test(request: pytest.FixtureRequest, spec: CassetteSpec) -> ServerUnderTest | None:
    """The server named for this test: the command line's, else the marker's, else the ini's
    (a URL wins over a command given at the same place); None when nothing names one."""
    config = request.config
    url, command = config.getoption("mcp_replay_target"), config.getoption("mcp_replay_target_stdio")
    if url or command:
        return ServerUnderTest(url, None if url else command, "the command line")
    if spec.url or spec.server:
        return ServerUnderTest(spec.url, spec.server, f"@pytest.mark.{MARKER}")
    url = str(config.getini("mcp_replay_server_url") or "").strip() or None
    command = str(config.getini("mcp_replay_server") or "").strip() or None
    if url or command:
        return ServerUnderTest(url, None if url else command, "the ini file")
    return None


_NO_SERVER = (
    "no MCP server under test: name one with @pytest.mark.mcp_cassette(..., server='CMD') or url='URL', "
    "the ini key mcp_replay_server (or mcp_replay_server_url), or --mcp-replay-target-stdio CMD / "
    "--mcp-replay-target URL"
)


def _records(spec: CassetteSpec, config: pytest.Config) -> bool:
    """Whether this test's client session is recorded (VCR.py's modes) rather than served."""
    mode = record_mode(config)
    return mode in ("all", "new_episodes") or (mode == "once" and not spec.path.is_file())


def _finish_recording(spec: CassetteSpec, config: pytest.Config, recorded: Path, fixture: str) -> None:
    """Move a finished recording over the cassette (``once``, ``all``) or add the requests the
    cassette lacks to it (``new_episodes``); a session that recorded nothing fails the test."""
    from mcp_replay_action.cassette import load, save
    from mcp_replay_action.errors import ReplayError

    try:
        fresh = load(recorded) if recorded.is_file() else None
        if fresh is None or not fresh.interactions:
            _fail(
                f"{fixture} recorded nothing into {spec.path} (--mcp-replay-record-mode={record_mode(config)}): "
                "the test must drive a session through it with an MCP client"
            )
        if record_mode(config) == "new_episodes" and spec.path.is_file():
            old = load(spec.path)
            merged, added = new_episodes(old, fresh)
            if added:
                save(merged, spec.path)
            config.stash[_WRITTEN].append(f"{spec.path}: {added} new interaction(s) added")
        else:
            spec.path.parent.mkdir(parents=True, exist_ok=True)
            os.replace(recorded, spec.path)
            config.stash[_WRITTEN].append(f"{spec.path}: recorded ({len(fresh.interactions)} interactions)")
    except ReplayError as exc:
        problem = exc.one_line()
    else:
        return
    finally:
        with suppress(FileNotFoundError):
            recorded.unlink()
    _fail(f"cannot save the recording: {problem}")


def new_episodes(old: Cassette, fresh: Cassette) -> tuple[Cassette, int]:
    """``old`` with every request of ``fresh`` it has no recording of (``matchers.request_key``)
    added at its end, numbered after its last interaction; and how many were added."""
    from dataclasses import replace

    from mcp_replay_action.compare.matchers import request_key

    known = {request_key(i.message) for i in old.interactions if i.kind == "request"}
    seq = max((i.seq for i in old.interactions), default=0)
    added = []
    for inter in fresh.interactions:
        if inter.kind != "request" or request_key(inter.message) in known:
            continue
        known.add(request_key(inter.message))
        seq += 1
        added.append(replace(inter, seq=seq, line=0))
    return old.with_interactions((*old.interactions, *added)), len(added)


def _load(spec: CassetteSpec, config: pytest.Config) -> Cassette:
    from mcp_replay_action.cassette import load

    path = _existing(spec, config)
    return _or_fail(lambda: load(path), "cannot use the cassette: ")


def _or_fail(make: Callable[[], _T], prefix: str) -> _T:
    """``make()``, or the test failed with ``prefix`` and the one-line message of its ReplayError."""
    from mcp_replay_action.errors import ReplayError

    try:
        return make()
    except ReplayError as exc:
        problem = exc.one_line()
    _fail(prefix + problem)  # outside ``except``: no chained traceback


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


def _mock_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL (``http://127.0.0.1:PORT/mcp``) of the mock server for the marked cassette; when the
    record mode records, of a recording proxy in front of the server under test (a URL)."""
    spec = cassette_spec(request, request.fixturename or "mcp_replay_mock_url")
    config = request.config
    if not _records(spec, config):
        yield request.getfixturevalue("mcp_replay_server").url
        return
    fixture = request.fixturename or "mcp_replay_mock_url"
    url, recording = _recording_to(request, spec, fixture, http=True)
    from mcp_replay_action.record.http_proxy import RecordingProxy

    proxy = _or_fail(lambda: RecordingProxy(url, cassette_path=str(recording)).start(), f"{fixture}: ")
    try:
        yield proxy.url
    finally:
        proxy.save(force=True)
        proxy.stop()
    _finish_recording(spec, config, recording, fixture)


def _recording_to(request: pytest.FixtureRequest, spec: CassetteSpec, fixture: str, *, http: bool) -> tuple[str, Path]:
    """The server a recording fixture records from (a URL when ``http``, else a command) and the
    file it records into; a missing or wrong kind of server fails the test saying which to name."""
    server = server_under_test(request, spec)
    found = (server.url if http else server.command) if server else None
    if server is None or not found:
        kind, other = ("Streamable HTTP", "mcp_replay_stdio") if http else ("stdio", "mcp_replay_mock_url")
        _fail(
            f"{fixture} records {spec.path} (--mcp-replay-record-mode={record_mode(request.config)}) from a {kind} "
            "server: "
            + (_NO_SERVER if server is None else f"{server.source} names {server.describe()!r}; use {other} for it")
        )
    recording = spec.path.with_name(spec.path.name + _RECORDING_SUFFIX)
    recording.parent.mkdir(parents=True, exist_ok=True)
    return found, recording


mcp_replay_mock_url = pytest.fixture(name="mcp_replay_mock_url")(_mock_url)


@pytest.fixture
def mcp_replay_stdio(request: pytest.FixtureRequest) -> Iterator[list[str]]:
    """The argv of a stdio mock server for the marked cassette; the client spawns (and ends) it.
    When the record mode records, the argv of a recording proxy in front of the server under
    test instead (``mcp-replay record``), and the cassette is saved when the test ends."""
    spec = cassette_spec(request, "mcp_replay_stdio")
    config = request.config
    if not _records(spec, config):
        path = _existing(spec, config)
        argv = [sys.executable, "-m", "mcp_replay_action", "serve", "--cassette", str(path)]
        if spec.match != "method_params":
            argv += ["--match", spec.match]
        yield argv
        return
    command, recording = _recording_to(request, spec, "mcp_replay_stdio", http=False)
    proxy = ["record", "--server", command, "--cassette", str(recording)]
    yield [sys.executable, "-m", "mcp_replay_action", *proxy]
    _finish_recording(spec, config, recording, "mcp_replay_stdio")


# ---------------------------------------------------------------------------------------------
# fixtures: the cassette replayed against a server (testing a server)
# ---------------------------------------------------------------------------------------------


def _verify(request: pytest.FixtureRequest) -> CassetteResult:
    """The marked cassette replayed against the server under test (a fresh connection or server
    process per test) by ``replay.run``, as ``mcp-replay replay`` replays it: compared with the
    marker's options, a failure confirmed against a fresh start, and, with ``--mcp-replay-update``,
    every changed answer rewritten and the cassette replayed once more to show it passes."""
    config = request.config
    fixture = request.fixturename or "mcp_replay_verify"
    spec = cassette_spec(request, fixture)
    path = _existing(spec, config)

    from mcp_replay_action.compare.options import CompareOptions
    from mcp_replay_action.errors import ReplayError

    # A bad ignore path is reported even when there is no server to verify against.
    _or_fail(
        lambda: CompareOptions(
            ignore_paths=spec.ignore_paths, ignore_keys=spec.ignore_keys, allow_reorder=spec.allow_reorder
        ),
        f"@pytest.mark.{MARKER}: ",
    )
    server = server_under_test(request, spec)
    if server is None:
        pytest.skip(_NO_SERVER)

    from mcp_replay_action.options import plan_from
    from mcp_replay_action.replay.engine import run

    timeout = float(config.getoption("mcp_replay_timeout"))
    update = updating(config) or record_mode(config) == "all"
    # The values ``mcp-replay replay`` would read from the same options (``options.py``).
    values = {
        "server": server.command,
        "url": server.url,
        "cassettes": (str(path),),
        "ignore_paths": spec.ignore_paths,
        "ignore_keys": spec.ignore_keys,
        "allow_reorder": spec.allow_reorder,
        "timeout": timeout,
        "startup_timeout": timeout,
        "update": update,
        "era": replay_era(config, spec),
    }
    # A plan the options refuse (an era beside an update) is the options' message, not the server's.
    plan = _or_fail(lambda: plan_from(values, root=str(config.rootpath), command=fixture), f"{fixture}: ")
    try:
        outcome = run(plan)
        rewritten = sum(u.updated for u in outcome.updates)
        if rewritten:
            config.stash[_WRITTEN].append(f"{spec.path}: {rewritten} changed answer(s) rewritten")
            # What the test sees is the rewritten cassette replayed: it passes only if it holds.
            outcome = run(_checking(plan))
        return outcome.report.cassettes[0]
    except ReplayError as exc:
        failure = _server_failure(exc, server.describe())
    _fail(failure)


def _checking(plan: Plan) -> Plan:
    from dataclasses import replace

    return replace(plan, mode="check")


mcp_replay_verify = pytest.fixture(name="mcp_replay_verify")(_verify)

# mcp-recorder's fixture names, for suites moving over from it; left to mcp-recorder itself when
# it is installed (a second fixture of the same name would silently replace one of the two).
URL_FIXTURES = ("mcp_replay_mock_url",) if recorder_installed() else ("mcp_replay_mock_url", "mcp_replay_url")
if not recorder_installed():
    mcp_replay_url = pytest.fixture(name="mcp_replay_url")(_mock_url)
    mcp_verify_result = pytest.fixture(name="mcp_verify_result")(_verify)


def _server_failure(exc: Exception, target: str) -> str:
    from mcp_replay_action.errors import CassetteError, ServerError

    if isinstance(exc, CassetteError):
        return f"cannot use the cassette: {exc.one_line()}"
    message = f"mcp_replay_verify against {target}: {' '.join(str(exc).split())}"
    # The message often ends with the last line of stderr already; more is worth showing.
    if isinstance(exc, ServerError) and exc.stderr_tail.strip() and exc.stderr_tail.strip() not in message:
        tail = exc.stderr_tail.strip().splitlines()[-10:]
        message += "\nserver stderr (last lines):\n" + "\n".join("  " + line for line in tail)
    return message


def _accept_command() -> str:
    """``pytest 'tests/test_x.py::test_y' --mcp-replay-update``: the running test again, rewriting
    the changed answers of its cassette (the test pytest names in ``PYTEST_CURRENT_TEST``)."""
    import shlex

    current = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    return " ".join(["pytest", *([shlex.quote(current)] if current else []), "--mcp-replay-update"])


def assert_no_regressions(
    result: CassetteResult, *, fail_on: str = "breaking", min_grade: str | None = None, verbose: bool = False
) -> None:
    """Raise ``AssertionError`` when the result fails the gate ``mcp-replay replay`` applies with
    the same ``--fail-on`` and ``--min-grade`` (by default: a breaking change or a missing
    response fails; an additive or cosmetic one is reported, not failed); the message is the
    console report of the cassette (every failure with its findings and diffs)."""
    __tracebackhide__ = True  # pytest shows the test's line, not this helper's
    from mcp_replay_action.grade.assemble import build_report
    from mcp_replay_action.model.gate import GatePolicy, fail_on_from_flags

    report = build_report([result], policy=GatePolicy(fail_on=fail_on_from_flags(fail_on, False), min_grade=min_grade))
    if report.gate.passed:
        return
    from dataclasses import replace

    from mcp_replay_action.report import console

    report = replace(report, accept=_accept_command())

    text = console.render(report, verbose=verbose).rstrip("\n")
    raise AssertionError(f"{'; '.join(report.gate.reasons)}\n{text}")
