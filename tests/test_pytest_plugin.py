"""The pytest plugin (``mcp_replay_action.pytest_plugin``), driven the way users meet it: inner test
files run by pytest (``pytester.runpytest_inprocess``; a process of its own where a run must start
clean) with the plugin active through its ``pytest11`` entry point, against the committed calc
cassette, the official SDK client, and the bundled healthy and regressed sample servers."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_replay_action import pytest_plugin
from mcp_replay_action.cassette import load
from mcp_replay_action.serve import MATCHERS, MockHttpServer

pytestmark = pytest.mark.integration

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
CASSETTE = REPO / "cassettes" / "calc" / "handshake.jsonl"
INNER_TIMEOUT = 180.0  # seconds for one inner pytest run (it may start servers and SDK sessions)
HEALTHY = shlex.join([sys.executable, "-m", "mcp_replay_action.samples.calc_server"])
REGRESSED = shlex.join([sys.executable, "-m", "mcp_replay_action.samples.calc_server_regressed"])


@pytest.fixture
def calc(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester directory holding the calc cassette at ``cassettes/handshake.jsonl``."""
    (pytester.path / "cassettes").mkdir()
    shutil.copy(CASSETTE, pytester.path / "cassettes" / "handshake.jsonl")
    return pytester


def run(pytester: pytest.Pytester, *args: str, process: bool = False) -> pytest.RunResult:
    """The inner pytest run, in this process (the plugin active through its ``pytest11`` entry
    point all the same; the outer test's timeout stays the only one), or in a process of its own
    where a run must see nothing an earlier run left in this one. An inner test file must not be
    named like a module of this suite: this process has imported ours under that name."""
    if process:
        return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs", *args, timeout=INNER_TIMEOUT)
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:timeout", "-rs", *args)


def shows(result: pytest.RunResult, *snippets: str) -> None:
    """Every snippet appears in the inner run's output (plain text: no glob brackets to escape)."""
    out = result.stdout.str() + result.stderr.str()
    missing = [s for s in snippets if s not in out]
    assert not missing, f"not in the output: {missing}\n{out}"


# ---------------------------------------------------------------------------------------------
# the plugin itself
# ---------------------------------------------------------------------------------------------


def test_importing_the_plugin_loads_nothing_heavy() -> None:
    code = (
        "import sys, mcp_replay_action.pytest_plugin\n"
        "heavy = ('deepdiff', 'httpx', 'jsonschema', 'click', 'mcp_replay_action.serve', "
        "'mcp_replay_action.replay.engine', 'mcp_replay_action.cassette', 'mcp_replay_action.transport')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"


def test_the_plugin_knows_every_matcher_the_mock_has() -> None:
    assert pytest_plugin.MATCHERS == MATCHERS


def test_the_marker_is_registered_and_documented(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--markers")
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.mcp_cassette(path, ignore_keys=(), *server=None, url=None, era=None): "
            "*the server under test*the protocol era mcp_replay_verify sends it in*"
        ]
    )


def test_two_targets_are_a_usage_error(calc: pytest.Pytester) -> None:
    calc.makepyfile("def test_nothing():\n    pass\n")
    result = run(calc, "--mcp-replay-target", "http://127.0.0.1:9/mcp", "--mcp-replay-target-stdio", HEALTHY)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--mcp-replay-target and --mcp-replay-target-stdio are mutually exclusive*"])


# ---------------------------------------------------------------------------------------------
# the cassette as a mock server: testing a client
# ---------------------------------------------------------------------------------------------

SDK_CLIENT_TESTS = """
import anyio
import httpx
import pytest
from mcp import Client

URLS = []


async def session(url):
    with anyio.fail_after(60):
        async with Client(url, read_timeout_seconds=30) as client:
            added = await client.call_tool("add", {"a": 2, "b": 3})
            echoed = await client.call_tool("echo", {"message": "hello"})
            tools = await client.list_tools()
            return {
                "add": added.content[0].text,
                "echo": echoed.content[0].text,
                "tools": [t.name for t in tools.tools],
                "server": client.server_info.name,
            }


@pytest.mark.mcp_cassette("cassettes/handshake.jsonl")
def test_the_client_gets_the_recorded_answers(mcp_replay_mock_url, mcp_replay_server):
    assert mcp_replay_mock_url.startswith("http://127.0.0.1:") and mcp_replay_mock_url == mcp_replay_server.url
    seen = anyio.run(session, mcp_replay_mock_url)
    assert seen == {
        "add": "5",
        "echo": "hello",
        "tools": ["add", "echo", "now", "start_job", "job_status", "roots", "confirm"],
        "server": "mcp-replay-sample-calc",
    }
    assert mcp_replay_server.stats.answered >= 4
    URLS.append(mcp_replay_mock_url)


def test_the_mock_stopped_after_the_test():
    assert len(URLS) == 1
    with pytest.raises(httpx.TransportError):
        httpx.post(URLS[0], json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=5)
"""


def test_an_sdk_client_gets_the_recorded_answers_from_mcp_replay_url(calc: pytest.Pytester) -> None:
    calc.makepyfile(test_client=SDK_CLIENT_TESTS)
    result = run(calc, "--strict-markers")
    result.assert_outcomes(passed=2)


SDK_STDIO_TEST = """
import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def add(argv):
    with anyio.fail_after(60):
        params = StdioServerParameters(command=argv[0], args=argv[1:])
        async with Client(params, read_timeout_seconds=30) as client:
            return (await client.call_tool("add", {"a": 2, "b": 3})).content[0].text


@pytest.mark.mcp_cassette("cassettes/handshake.jsonl")
def test_a_stdio_client_gets_the_recorded_answer(mcp_replay_stdio):
    assert anyio.run(add, mcp_replay_stdio) == "5"
"""


def test_an_sdk_client_gets_the_recorded_answers_from_mcp_replay_stdio(calc: pytest.Pytester) -> None:
    calc.makepyfile(test_sdk_over_stdio=SDK_STDIO_TEST)  # not a name of ours: the run is in this process
    run(calc).assert_outcomes(passed=1)


def test_paths_are_relative_to_the_test_files_directory(pytester: pytest.Pytester) -> None:
    sub = pytester.mkpydir("suite")
    (sub / "data").mkdir()
    shutil.copy(CASSETTE, sub / "data" / "calc.jsonl")
    (sub / "test_where.py").write_text(
        "import sys\n"
        "from pathlib import Path\n"
        "import pytest\n\n"
        "pytestmark = pytest.mark.mcp_cassette('data/calc.jsonl', match='strict')\n\n"
        "def test_argv(mcp_replay_stdio):\n"
        "    where = str(Path(__file__).parent / 'data' / 'calc.jsonl')\n"
        "    assert mcp_replay_stdio == [sys.executable, '-m', 'mcp_replay_action', 'serve',\n"
        "                                '--cassette', where, '--match', 'strict']\n"
    )
    # Run from the rootdir, one level above the test file: the path still resolves next to it.
    run(pytester, "suite").assert_outcomes(passed=1)


# ---------------------------------------------------------------------------------------------
# the cassette replayed against a server: testing a server
# ---------------------------------------------------------------------------------------------

VERIFY_TEST = """
import pytest
from mcp_replay_action.pytest_plugin import assert_no_regressions


@pytest.mark.mcp_cassette("cassettes/handshake.jsonl")
def test_no_regressions(mcp_replay_verify):
    assert len(mcp_replay_verify.results) == 8
    assert_no_regressions(mcp_replay_verify)
    assert (mcp_replay_verify.passed, mcp_replay_verify.failed, mcp_replay_verify.missing) == (8, 0, 0)
    assert mcp_replay_verify.score.grade == "A"
"""


def test_verify_passes_against_the_healthy_server(calc: pytest.Pytester) -> None:
    calc.makepyfile(test_verify=VERIFY_TEST)
    run(calc, "--mcp-replay-target-stdio", HEALTHY).assert_outcomes(passed=1)


def test_verify_fails_the_regressed_twin_with_a_readable_message(calc: pytest.Pytester) -> None:
    calc.makepyfile(test_verify=VERIFY_TEST)
    result = run(calc, "--mcp-replay-target-stdio", REGRESSED)
    result.assert_outcomes(failed=1)
    shows(
        result,
        # The CLI's gate: the changed value is breaking, the added key is reported, not gating.
        "E       AssertionError: 1 breaking change(s) and 0 missing response(s)\n",
        "cassettes/handshake.jsonl  (handshake 2025-11-25)",
        "E         [FAIL] #3 tools/call add  breaking value-change\n",
        'E                $.result.content[0].text: value changed: "5" -> "6"\n',
        "E         [DIFF] #4 tools/call echo  additive structure-change\n",
        "E                $.result.echoed: key 'echoed' added\n",
        "E         GRADE B  (93.1/100)  capped at B: a breaking change\n",
        # The next step, in the plugin's words: this test again, rewriting its cassette.
        "E       to accept these changes, review them and run: pytest test_verify.py::test_no_regressions"
        " --mcp-replay-update\n",
    )
    # The report is the message: no traceback into the plugin's own code.
    assert "pytest_plugin.py" not in result.stdout.str()


def test_the_markers_compare_options_reach_the_replay(calc: pytest.Pytester) -> None:
    calc.makepyfile(
        test_forgiving="""
import pytest
from mcp_replay_action.pytest_plugin import assert_no_regressions


@pytest.mark.mcp_cassette(
    "cassettes/handshake.jsonl", ignore_keys="echoed", ignore_paths=["$.result.content[0].text"]
)
def test_forgiven(mcp_replay_verify):
    assert_no_regressions(mcp_replay_verify)
"""
    )
    run(calc, "--mcp-replay-target-stdio", REGRESSED).assert_outcomes(passed=1)


def test_verify_over_streamable_http(calc: pytest.Pytester) -> None:
    calc.makepyfile(test_verify=VERIFY_TEST)
    # The target is a real Streamable HTTP endpoint: this package's own mock, answering from
    # the same recording, so every interaction must match.
    with MockHttpServer(load(CASSETTE)) as target:
        result = run(calc, "--mcp-replay-target", target.url)
    result.assert_outcomes(passed=1)


def test_verify_without_a_target_is_skipped_with_the_reason(calc: pytest.Pytester) -> None:
    calc.makepyfile(test_verify=VERIFY_TEST)
    result = run(calc)
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        [
            "SKIPPED *no MCP server under test: name one with @pytest.mark.mcp_cassette(..., server='CMD') or url='URL', "
            "the ini key mcp_replay_server (or mcp_replay_server_url), or --mcp-replay-target-stdio CMD*"
        ]
    )


def test_a_server_that_cannot_start_is_an_error_naming_it(calc: pytest.Pytester) -> None:
    calc.makepyfile(test_verify=VERIFY_TEST)
    broken = shlex.join([sys.executable, "-c", "import sys; sys.stderr.write('no config here\\n'); sys.exit(3)"])
    result = run(calc, "--mcp-replay-target-stdio", broken, "--mcp-replay-timeout", "10")
    result.assert_outcomes(errors=1)
    shows(result, f"\nmcp_replay_verify against {broken}: server exited at start-up with status 3: no config here\n")


# ---------------------------------------------------------------------------------------------
# missing cassettes and bad markers
# ---------------------------------------------------------------------------------------------

ABSENT_TESTS = """
import pytest

pytestmark = pytest.mark.mcp_cassette("cassettes/absent.jsonl")


def test_url(mcp_replay_mock_url):
    pass


def test_stdio(mcp_replay_stdio):
    pass


def test_verify(mcp_replay_verify):
    pass
"""


def test_a_missing_cassette_is_an_error_by_default(calc: pytest.Pytester) -> None:
    calc.makepyfile(test_absent=ABSENT_TESTS)
    result = run(calc, "--mcp-replay-target-stdio", HEALTHY)
    result.assert_outcomes(errors=3)
    absent = calc.path / "cassettes" / "absent.jsonl"
    message = (
        f"\ncassette {absent} does not exist (paths in @pytest.mark.mcp_cassette are relative to the test file's "
        "directory); record it with a test that drives mcp_replay_stdio or mcp_replay_mock_url under "
        "--mcp-replay-record-mode=once, or with `mcp-replay record`\n"
    )
    assert result.stdout.str().count(message) == 3, result.stdout.str()


def test_a_missing_cassette_is_skipped_in_auto_mode(calc: pytest.Pytester) -> None:
    calc.makepyfile(test_absent=ABSENT_TESTS)
    result = run(calc, "--mcp-replay-record-mode=auto", "--mcp-replay-target-stdio", HEALTHY)
    result.assert_outcomes(skipped=3)
    result.stdout.fnmatch_lines(
        ["SKIPPED * cassette */absent.jsonl is not recorded yet (--mcp-replay-record-mode=auto)"]
    )


def test_bad_markers_fail_setup_with_one_line_each(calc: pytest.Pytester) -> None:
    (calc.path / "cassettes" / "broken.jsonl").write_text('{"schema": "mcp-replay/cassette@1"}\nnot json\n')
    calc.makepyfile(
        test_bad="""
import pytest


def test_no_marker(mcp_replay_mock_url):
    pass


@pytest.mark.mcp_cassette("cassettes/handshake.jsonl", match="fuzzy")
def test_bad_match(mcp_replay_mock_url):
    pass


@pytest.mark.mcp_cassette("cassettes/handshake.jsonl", ignore_feilds=["x"])
def test_unknown_option(mcp_replay_verify):
    pass


@pytest.mark.mcp_cassette("cassettes/handshake.jsonl", ignore_paths=["$.result[[["])
def test_bad_ignore_path(mcp_replay_verify):
    pass


@pytest.mark.mcp_cassette()
def test_no_path(mcp_replay_stdio):
    pass


@pytest.mark.mcp_cassette("cassettes/broken.jsonl")
def test_broken_cassette(mcp_replay_mock_url):
    pass
"""
    )
    result = run(calc)
    result.assert_outcomes(errors=6)
    broken = calc.path / "cassettes" / "broken.jsonl"
    shows(
        result,
        "\nmcp_replay_mock_url needs a cassette: mark the test with @pytest.mark.mcp_cassette('path/to/cassette.jsonl')\n",
        "\n@pytest.mark.mcp_cassette: unknown match 'fuzzy' (expected one of: method_params, sequential, strict)\n",
        "\n@pytest.mark.mcp_cassette: unknown option(s) ignore_feilds "
        "(known: ignore_keys, ignore_fields, ignore_paths, allow_reorder, match, server, url, era)\n",
        "\n@pytest.mark.mcp_cassette: invalid ignore path '$.result[[[': cannot read '[[['\n",
        "\n@pytest.mark.mcp_cassette takes one cassette path, got ()\n",
        f"\ncannot use the cassette: {broken}:2: invalid JSON",
    )
    # One line each: no traceback, no chained exception.
    assert "During handling" not in result.stdout.str()
    assert "Traceback" not in result.stdout.str()


# ---------------------------------------------------------------------------------------------
# beside mcp-recorder (both installed, both plugins loaded)
# ---------------------------------------------------------------------------------------------

RECORDER_STYLE_TEST = """
import pytest


@pytest.mark.mcp_cassette("cassettes/handshake.jsonl", ignore_fields=["serverInfo"])
def test_no_regressions(mcp_replay_verify):
    assert mcp_replay_verify.failed == 0 and mcp_replay_verify.missing == 0
    assert mcp_replay_verify.passed >= 1
"""


def test_both_plugins_load_side_by_side_with_mcp_recorder(calc: pytest.Pytester) -> None:
    pytest.importorskip("mcp_recorder", reason="mcp-recorder is in the test extra")
    # Before: "option dest 'mcp_record_mode' already used" and no test ran at all.
    help_text = run(calc, "--help")
    assert help_text.ret == 0, help_text.stderr.str()
    listed = help_text.stdout.str()
    assert "--mcp-replay-target-stdio" in listed and "--mcp-replay-record-mode" in listed
    assert "--mcp-target-stdio" in listed and "--mcp-match" in listed  # mcp-recorder's, still its own
    calc.makepyfile(test_verify=RECORDER_STYLE_TEST)
    result = run(calc, "--mcp-replay-target-stdio", HEALTHY)
    result.assert_outcomes(passed=1)


# ---------------------------------------------------------------------------------------------
# the server under test from an ini key or a marker; one run with the CLI's confirmation pass
# ---------------------------------------------------------------------------------------------

VERIFY_GATED = """
import pytest
from mcp_replay_action.pytest_plugin import assert_no_regressions


@pytest.mark.mcp_cassette("cassettes/handshake.jsonl"{marker})
def test_no_regressions(mcp_replay_verify):
    assert_no_regressions(mcp_replay_verify)
"""


def ini(pytester: pytest.Pytester, **keys: str) -> None:
    pytester.makeini("[pytest]\n" + "".join(f"{key} = {value}\n" for key, value in keys.items()))


def test_the_server_under_test_comes_from_the_ini_file(calc: pytest.Pytester) -> None:
    calc.makepyfile(test_verify=VERIFY_GATED.format(marker=""))
    ini(calc, mcp_replay_server=HEALTHY)
    run(calc).assert_outcomes(passed=1)
    ini(calc, mcp_replay_server=REGRESSED)
    failed = run(calc)
    failed.assert_outcomes(failed=1)
    shows(failed, "E       AssertionError: 1 breaking change(s) and 0 missing response(s)\n")


def test_the_markers_server_wins_over_the_ini_and_the_command_line_over_both(calc: pytest.Pytester) -> None:
    calc.makepyfile(test_verify=VERIFY_GATED.format(marker=f", server={REGRESSED!r}"))
    ini(calc, mcp_replay_server=HEALTHY)
    run(calc).assert_outcomes(failed=1)  # the marker's regressed build
    run(calc, "--mcp-replay-target-stdio", HEALTHY).assert_outcomes(passed=1)
    with MockHttpServer(load(CASSETTE)) as target:  # a URL in the marker is an HTTP server
        calc.makepyfile(test_verify=VERIFY_GATED.format(marker=f", url={target.url!r}"))
        run(calc).assert_outcomes(passed=1)


def test_a_marker_naming_two_servers_fails_saying_so(calc: pytest.Pytester) -> None:
    calc.makepyfile(test_verify=VERIFY_GATED.format(marker=f", server={HEALTHY!r}, url='http://127.0.0.1:9/mcp'"))
    result = run(calc)
    result.assert_outcomes(errors=1)
    shows(result, "@pytest.mark.mcp_cassette: give server= (a stdio command) or url= (an HTTP endpoint), not both\n")


def test_a_server_whose_answers_vary_between_starts_passes_as_the_cli_passes_it(pytester: pytest.Pytester) -> None:
    from e2e_helpers import SERVERS, python_server, record_through_proxy, replay

    noisy = python_server(SERVERS / "noisy_server.py")
    cassette = pytester.path / "cassettes" / "noisy.jsonl"
    cassette.parent.mkdir()

    async def session(client: object) -> dict[str, object]:
        await client.list_tools()  # type: ignore[attr-defined]
        await client.call_tool("status", {})  # type: ignore[attr-defined]
        return {}

    record_through_proxy(noisy, cassette, session)
    # Without the confirmation pass the varying PID, duration and sample fail the replay: the
    # pytest test below can only pass through the confirmation the CLI runs.
    report = pytester.path / "report.json"
    assert replay(noisy, cassette, "--no-confirm", report=report, gate=False).code == 1
    assert replay(noisy, cassette, report=report, gate=False).code == 0
    pytester.makepyfile(
        test_noisy=f"""
import pytest
from mcp_replay_action.pytest_plugin import assert_no_regressions


@pytest.mark.mcp_cassette("cassettes/noisy.jsonl", server={noisy!r})
def test_noise_is_not_a_failure(mcp_replay_verify):
    assert mcp_replay_verify.failed == 0, mcp_replay_verify
    assert any(r.noise for r in mcp_replay_verify.results)
    assert_no_regressions(mcp_replay_verify, fail_on="any")
"""
    )
    run(pytester).assert_outcomes(passed=1)


# ---------------------------------------------------------------------------------------------
# --mcp-replay-update: rewrite the changed answers, as `mcp-replay replay --update`
# ---------------------------------------------------------------------------------------------


def test_update_rewrites_the_changed_answers_and_the_test_passes(calc: pytest.Pytester) -> None:
    calc.makepyfile(test_verify=VERIFY_GATED.format(marker=""))
    ini(calc, mcp_replay_server=REGRESSED)
    path = calc.path / "cassettes" / "handshake.jsonl"
    before = path.read_text().splitlines()
    run(calc).assert_outcomes(failed=1)
    assert path.read_text().splitlines() == before  # a failing run writes nothing
    updated = run(calc, "--mcp-replay-update")
    updated.assert_outcomes(passed=1)
    shows(updated, "mcp-replay: cassettes written", f"{path}: 2 changed answer(s) rewritten")
    after = path.read_text().splitlines()
    assert after != before and len(after) == len(before)
    # The two changed answers only (the header notes the update).
    assert sum(a != b for a, b in zip(before[1:], after[1:], strict=True)) == 2
    run(calc).assert_outcomes(passed=1)  # the regressed build is the new recording
    run(calc, "--mcp-replay-target-stdio", HEALTHY).assert_outcomes(failed=1)


# ---------------------------------------------------------------------------------------------
# --mcp-replay-record-mode: VCR.py's modes
# ---------------------------------------------------------------------------------------------

RECORDING_TEST = """
import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def session(argv, numbers):
    with anyio.fail_after(60):
        params = StdioServerParameters(command=argv[0], args=argv[1:])
        async with Client(params, read_timeout_seconds=30) as client:
            return [(await client.call_tool("add", {"a": a, "b": 3})).content[0].text for a in numbers]


@pytest.mark.mcp_cassette("cassettes/new.jsonl")
def test_adds(mcp_replay_stdio):
    assert anyio.run(session, mcp_replay_stdio, NUMBERS) == ANSWERS
"""
BROKEN = shlex.join([sys.executable, "-c", "import sys; sys.exit(3)"])


def recording_test(numbers: list[int], answers: list[str]) -> str:
    return f"NUMBERS = {numbers!r}\nANSWERS = {answers!r}\n" + RECORDING_TEST


def added(path: Path) -> list[int]:
    return [i.message["params"]["arguments"]["a"] for i in load(path).interactions if i.method == "tools/call"]


def test_record_mode_none_never_records(calc: pytest.Pytester) -> None:
    calc.makepyfile(test_rec=recording_test([2], ["5"]))
    ini(calc, mcp_replay_server=HEALTHY, mcp_replay_record_mode="none")
    run(calc).assert_outcomes(errors=1)
    assert not (calc.path / "cassettes" / "new.jsonl").exists()


def test_record_mode_once_records_a_missing_cassette_then_serves_it(calc: pytest.Pytester) -> None:
    calc.makepyfile(test_rec=recording_test([2], ["5"]))
    ini(calc, mcp_replay_server=HEALTHY)
    path = calc.path / "cassettes" / "new.jsonl"
    recorded = run(calc, "--mcp-replay-record-mode=once")
    recorded.assert_outcomes(passed=1)
    shows(recorded, "mcp-replay: cassettes written", f"{path}: recorded (")
    assert added(path) == [2]
    assert not list(path.parent.glob("*.recording"))
    text = path.read_text()
    # Recorded once: the next run is answered from the cassette, with no server at all.
    ini(calc, mcp_replay_server=BROKEN)
    run(calc, "--mcp-replay-record-mode=once").assert_outcomes(passed=1)
    assert path.read_text() == text
    # A new request under once is not recorded: the mock has no answer for it.
    calc.makepyfile(test_rec=recording_test([2, 4], ["5", "7"]))
    run(calc, "--mcp-replay-record-mode=once").assert_outcomes(failed=1)
    assert path.read_text() == text


def test_record_mode_new_episodes_adds_what_the_cassette_lacks(calc: pytest.Pytester) -> None:
    ini(calc, mcp_replay_server=HEALTHY, mcp_replay_record_mode="new_episodes")
    path = calc.path / "cassettes" / "new.jsonl"
    calc.makepyfile(test_rec=recording_test([2], ["5"]))
    run(calc).assert_outcomes(passed=1)
    old_lines = path.read_text().splitlines()
    calc.makepyfile(test_rec=recording_test([2, 4], ["5", "7"]))
    grown = run(calc)
    grown.assert_outcomes(passed=1)
    shows(grown, f"{path}: 1 new interaction(s) added")
    assert added(path) == [2, 4]
    assert path.read_text().splitlines()[: len(old_lines)] == old_lines  # what it held keeps its bytes
    # The grown cassette serves both requests, with no server.
    ini(calc, mcp_replay_server=BROKEN, mcp_replay_record_mode="none")
    run(calc).assert_outcomes(passed=1)


def test_record_mode_all_records_every_cassette_again(calc: pytest.Pytester) -> None:
    path = calc.path / "cassettes" / "new.jsonl"
    ini(calc, mcp_replay_server=HEALTHY)
    calc.makepyfile(test_rec=recording_test([2], ["5"]))
    run(calc, "--mcp-replay-record-mode=once").assert_outcomes(passed=1)
    # The regressed build adds one more: under all, its answer replaces the recording.
    ini(calc, mcp_replay_server=REGRESSED)
    calc.makepyfile(test_rec=recording_test([2], ["6"]))
    run(calc, "--mcp-replay-record-mode=all").assert_outcomes(passed=1)
    calls = [i for i in load(path).interactions if i.method == "tools/call"]
    assert [c.response["result"]["content"][0]["text"] for c in calls if c.response] == ["6"]
    run(calc, "--mcp-replay-record-mode=none").assert_outcomes(passed=1)  # served: "6"


def test_record_mode_once_records_over_streamable_http(calc: pytest.Pytester) -> None:
    calc.makepyfile(
        test_client=SDK_CLIENT_TESTS.replace("cassettes/handshake.jsonl", "cassettes/http.jsonl")
        .replace(", mcp_replay_server):", "):")
        .replace("mcp_replay_mock_url == mcp_replay_server.url", "True")
        .replace("    assert mcp_replay_server.stats.answered >= 4\n", "")
    )
    path = calc.path / "cassettes" / "http.jsonl"
    with MockHttpServer(load(CASSETTE)) as upstream:
        ini(calc, mcp_replay_server_url=upstream.url)
        run(calc, "--mcp-replay-record-mode=once", process=True).assert_outcomes(passed=2)
    assert {i.method for i in load(path).interactions} >= {"initialize", "tools/call", "tools/list"}
    run(calc, process=True).assert_outcomes(passed=2)  # the upstream is gone: served from the recording


def test_a_session_that_records_nothing_fails_saying_so(calc: pytest.Pytester) -> None:
    calc.makepyfile(
        test_idle="""
import pytest


@pytest.mark.mcp_cassette("cassettes/new.jsonl")
def test_idle(mcp_replay_stdio):
    pass
"""
    )
    ini(calc, mcp_replay_server=HEALTHY)
    result = run(calc, "--mcp-replay-record-mode=once")
    result.assert_outcomes(passed=1, errors=1)
    shows(result, "mcp_replay_stdio recorded nothing into", "the test must drive a session through it")
    assert not (calc.path / "cassettes" / "new.jsonl").exists()


def test_recording_without_a_server_and_verify_without_a_cassette_say_why(calc: pytest.Pytester) -> None:
    calc.makepyfile(test_absent=ABSENT_TESTS)
    result = run(calc, "-ra", "--mcp-replay-record-mode=once")
    result.assert_outcomes(errors=3)
    out = result.stdout.str()
    # The two recording fixtures, each in its error section (the short summary's lines are cut
    # at the terminal's width, so how often they repeat it depends on the length of the path).
    sections = out.split("short test summary info")[0]
    assert sections.count("no MCP server under test") == 2, out
    for fixture in ("mcp_replay_mock_url", "mcp_replay_stdio"):
        assert any(line.startswith(f"{fixture} records") and "no MCP server under test" in line for line in out.splitlines()), out
    assert "ERROR test_absent.py::test_verify - Failed: cassette" in out, out
