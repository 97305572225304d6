"""The replay's fast paths give the same verdicts as the slow ones (the benchmarks in
``benchmarks/`` measure how fast; these only check what is found and what is loaded)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_replay_action.compare.engine import CompareOptions, compare
from mcp_replay_action.values.limits import FAST_ENV
from mcp_replay_action.values.narrow import common_prefix

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("limits")]

ROOT = Path(__file__).resolve().parent.parent


def answer(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": json.dumps({"records": records})}]},
    }


def records(n: int) -> list[dict[str, Any]]:
    return [{"name": f"item-{i}", "score": i % 7, "ok": True, "tags": ["a", "b"]} for i in range(n)]


def test_one_changed_member_of_a_large_named_list_is_the_only_finding() -> None:
    before, after = records(3000), records(3000)
    after[1500]["score"] = -1
    (finding,) = compare(answer(before), answer(after))
    assert finding.path == "$.result.content[0].text{json}.records[name=item-1500].score"
    assert (finding.kind, finding.cls, finding.before, finding.after) == ("value-change", "breaking", 1500 % 7, -1)


def test_a_boolean_that_became_a_number_inside_an_otherwise_equal_member_is_found() -> None:
    # ``==`` says True == 1: the member is left out of the diff on ``==`` and must still be seen.
    before, after = records(50), records(50)
    after[10]["ok"] = 1
    after[40]["score"] = 99
    paths = {f.path: f.message for f in compare(answer(before), answer(after))}
    assert paths == {
        "$.result.content[0].text{json}.records[name=item-10].ok": "type changed from boolean to number: true -> 1",
        "$.result.content[0].text{json}.records[name=item-40].score": "value changed: 5 -> 99",
    }


def test_reordered_named_items_inside_an_equal_looking_subtree_are_reported() -> None:
    tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("a", "b", "c")]
    before = {"jsonrpc": "2.0", "id": 1, "result": {"wrapper": {"tools": tools}, "other": 1}}
    after = {"jsonrpc": "2.0", "id": 1, "result": {"wrapper": {"tools": tools[::-1]}, "other": 2}}
    kinds = sorted((f.kind, f.path) for f in compare(before, after, CompareOptions()))
    assert kinds == [("ordering-change", "$.result.wrapper.tools"), ("value-change", "$.result.other")]


def test_first_difference_of_long_text() -> None:
    base = "x" * 100_000
    for at in (0, 1, 4095, 50_000, 99_999):
        changed = base[:at] + "y" + base[at + 1 :]
        assert common_prefix(base, changed) == at
    assert common_prefix(base, base) == len(base)
    assert common_prefix(base, base + "tail") == len(base)
    assert common_prefix("", "a") == 0


# Modules the CLI must not load unless the run uses them: the diff engine, the schema validator,
# the HTTP client, YAML (scenarios), the report writers and GitHub code, and standard-library
# modules that cost start-up (statistics: only --repeat; importlib.resources; ctypes; pathlib).
NEVER_FOR_HELP = (
    "deepdiff",
    "jsonschema",
    "httpx",
    "yaml",
    "mcp_replay_action.replay.engine",
    "mcp_replay_action.compare.engine",
    "mcp_replay_action.compare.normalize",
    "mcp_replay_action.transport",
    "mcp_replay_action.redact",
    "mcp_replay_action.cassette",
    "mcp_replay_action.github",
    "statistics",
    "importlib.resources",
    "ctypes",
    "pathlib",
)
NEVER_FOR_A_PASSING_STDIO_REPLAY = (
    "deepdiff",
    "jsonschema",
    "httpx",
    "yaml",
    "mcp_replay_action.transport.http_client",
    "mcp_replay_action.github",
    "mcp_replay_action.scenarios",
    "mcp_replay_action.report.markdown",
    "mcp_replay_action.report.junit",
    "statistics",
    "importlib.resources",
)


def loaded_after_cli(
    *args: str, exit_code: int = 0, fast: bool | None = None
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run the CLI in a fresh interpreter; its output and every module it had loaded at the end.
    ``fast`` True or False sets ``MCP_REPLAY_FAST`` for it (a test of a fast path runs with the
    fast paths on whatever the suite runs with); None leaves the suite's own."""
    env = dict(os.environ)
    if fast is not None:
        env[FAST_ENV] = "1" if fast else "0"
    code = (
        "import json, sys\n"
        "from mcp_replay_action.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        f"    assert (exc.code or 0) == {exit_code}, exc.code\n"
        "print('MODULES', json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, check=False, env=env
    )
    line = next((x for x in done.stderr.splitlines() if x.startswith("MODULES ")), None)
    assert line is not None, done.stdout + done.stderr
    return done, set(json.loads(line.split(" ", 1)[1]))


def test_help_loads_none_of_the_replay_machinery() -> None:
    done, modules = loaded_after_cli("--help")
    assert "replay" in done.stdout
    assert sorted(m for m in NEVER_FOR_HELP if m in modules) == []


def test_an_all_pass_stdio_replay_loads_only_what_it_uses() -> None:
    server = f"{sys.executable} -m mcp_replay_action.samples.calc_server"
    cassettes = str(ROOT / "cassettes/calc/*.jsonl")
    done, modules = loaded_after_cli("replay", "--cassette", cassettes, "--server", server)
    assert "GRADE A" in done.stdout, done.stdout + done.stderr
    assert "mcp_replay_action.replay.engine" in modules  # it did replay
    assert sorted(m for m in NEVER_FOR_A_PASSING_STDIO_REPLAY if m in modules) == []


# The compare engine: imported only once an answer differs from its recording, and never before
# the server is spawned (nor is the console report).
COMPARE_ENGINE = (
    "mcp_replay_action.compare.engine",
    "mcp_replay_action.compare.normalize",
    "mcp_replay_action.compare.carry",
    "mcp_replay_action.compare.noise",
    "mcp_replay_action.replay.update",
)
NEVER_BEFORE_THE_SERVER_IS_SPAWNED = (*COMPARE_ENGINE, "mcp_replay_action.report.console")


def test_the_server_is_spawned_before_the_compare_engine_is_imported() -> None:
    server = f"{sys.executable} -m mcp_replay_action.samples.calc_server"
    code = (
        "import json, subprocess, sys\n"
        "spawn = subprocess.Popen._execute_child\n"
        "seen = []\n"
        "def execute_child(self, *args, **kwargs):\n"
        "    seen.append(sorted(sys.modules))\n"
        "    return spawn(self, *args, **kwargs)\n"
        "subprocess.Popen._execute_child = execute_child\n"
        "from mcp_replay_action.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    assert exc.code in (0, None), exc.code\n"
        "print('AT_SPAWN', json.dumps(seen[0]), file=sys.stderr)\n"
        "print('AT_END', json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    argv = ["replay", "--cassette", str(ROOT / "cassettes/calc/*.jsonl"), "--server", server]
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120, check=False)
    assert "GRADE A" in done.stdout, done.stdout + done.stderr
    lines = dict(x.split(" ", 1) for x in done.stderr.splitlines() if x.startswith(("AT_SPAWN ", "AT_END ")))
    at_spawn, at_end = set(json.loads(lines["AT_SPAWN"])), set(json.loads(lines["AT_END"]))
    assert "mcp_replay_action.compare.engine" in at_end  # it did compare, after the spawn
    assert sorted(m for m in NEVER_BEFORE_THE_SERVER_IS_SPAWNED if m in at_spawn) == []


def _record_calc(path: Path, calls: list[dict[str, Any]], server_argv: list[str] | None = None) -> None:
    """A cassette recorded from the real calc sample server (or ``server_argv``): the handshake,
    then ``calls``."""
    from mcp_replay_action.cassette import save, with_lines
    from mcp_replay_action.model.cassette import Cassette, Interaction

    argv = server_argv or [sys.executable, "-m", "mcp_replay_action.samples.calc_server"]
    server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    init = {"method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}}}
    inters = []
    for seq, call in enumerate([init, {"method": "notifications/initialized"}, *calls]):
        message = {"jsonrpc": "2.0", **({"id": seq} if seq != 1 else {}), **call}
        server.stdin.write(json.dumps(message).encode() + b"\n")
        server.stdin.flush()
        answer = json.loads(server.stdout.readline()) if seq != 1 else None
        inters.append(Interaction(seq, "request" if seq != 1 else "notification", message, answer))
    server.stdin.close()
    server.wait(timeout=30)
    save(with_lines(Cassette(meta={}, interactions=tuple(inters))), path)


def test_a_replay_whose_answers_are_their_recordings_never_loads_the_compare_engine(tmp_path: Path) -> None:
    calls = [{"method": "tools/call", "params": {"name": "add", "arguments": {"a": i, "b": 2}}} for i in range(5)]
    _record_calc(tmp_path / "same.jsonl", calls)
    server = f"{sys.executable} -m mcp_replay_action.samples.calc_server"
    done, modules = loaded_after_cli("replay", "--cassette", str(tmp_path / "same.jsonl"), "--server", server)
    assert "GRADE A" in done.stdout and "6 passed" in done.stdout, done.stdout + done.stderr
    assert sorted(m for m in COMPARE_ENGINE if m in modules) == []
    # The same cassette with one answer changed loads it, and finds the change.
    lines = (tmp_path / "same.jsonl").read_text().splitlines()
    lines[-1] = lines[-1].replace('"text":"6"', '"text":"7"')
    (tmp_path / "changed.jsonl").write_text("\n".join(lines) + "\n")
    changed, modules = loaded_after_cli(
        "replay", "--cassette", str(tmp_path / "changed.jsonl"), "--server", server, exit_code=1
    )
    assert "value-change" in changed.stdout, changed.stdout + changed.stderr
    assert "mcp_replay_action.compare.engine" in modules


def test_waiting_on_a_slow_server_never_loads_the_compare_engine_for_answers_with_no_long_text(
    tmp_path: Path,
) -> None:
    # Past IDLE_AFTER the replay looks for a long JSON text in the recorded answer to read ahead
    # (narrow.long_json_text): that look alone imports nothing of the compare engine.
    slow = [sys.executable, str(ROOT / "tests/fakes/echo_server.py"), "--delay", "0.05"]
    calls = [{"method": "tools/call", "params": {"name": "echo", "arguments": {"n": i}}} for i in range(3)]
    _record_calc(tmp_path / "slow.jsonl", calls, slow)
    server = " ".join(slow)
    done, modules = loaded_after_cli(
        "replay", "--cassette", str(tmp_path / "slow.jsonl"), "--server", server, fast=True
    )  # the look is a fast path's: none with the fast paths off
    assert "GRADE A" in done.stdout and "4 passed" in done.stdout, done.stdout + done.stderr
    assert "mcp_replay_action.values.narrow" in modules  # it looked
    assert sorted(m for m in COMPARE_ENGINE if m in modules) == []


def test_a_server_that_exits_before_it_says_anything_is_a_start_up_failure(tmp_path: Path) -> None:
    crash = f"{sys.executable} -c \"import sys; sys.stderr.write('no config here\\n'); sys.exit(3)\""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_replay_action",
            "replay",
            "--cassette",
            str(ROOT / "cassettes/calc/session.jsonl"),
            "--server",
            crash,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "server exited at start-up with status 3: no config here" in done.stderr + done.stdout


def test_a_large_cassette_is_streamed_and_replays_like_a_loaded_one(tmp_path: Path, monkeypatch: Any) -> None:
    from mcp_replay_action.cassette import jsonl, load
    from mcp_replay_action.cassette.jsonl import StreamedInteractions

    source = ROOT / "cassettes/calc/session.jsonl"
    loaded = load(source)
    monkeypatch.setattr(jsonl, "STREAM_ABOVE_BYTES", 0)  # treat this small cassette as a large one
    streamed = load(source, stream=True)
    assert isinstance(streamed.interactions, StreamedInteractions)
    assert len(streamed.interactions) == len(loaded.interactions)
    assert list(streamed.interactions) == list(loaded.interactions)  # and again, on a second pass
    assert list(streamed.interactions) == list(loaded.interactions)
    assert streamed.meta == loaded.meta


def test_a_streamed_cassette_replays_to_the_same_report(monkeypatch: Any) -> None:
    from mcp_replay_action.cassette import jsonl
    from mcp_replay_action.plan import Plan
    from mcp_replay_action.replay.engine import run
    from mcp_replay_action.transport import Target

    plan = Plan(
        paths=(str(ROOT / "cassettes/calc/session.jsonl"),),
        target=Target(command=(sys.executable, "-m", "mcp_replay_action.samples.calc_server")),
    )
    loaded = run(plan).report
    monkeypatch.setattr(jsonl, "STREAM_ABOVE_BYTES", 0)
    streamed = run(plan).report
    assert [r.status for r in streamed.cassettes[0].results] == [r.status for r in loaded.cassettes[0].results]
    assert streamed.score == loaded.score and streamed.gate.passed


def test_what_is_built_frozen_is_kept_from_the_collector_until_thawed() -> None:
    import gc

    from mcp_replay_action.host.gcpause import frozen, thawing

    assert gc.get_freeze_count() == 0
    with thawing():
        with frozen():
            built = [{"k": [i]} for i in range(1000)]
            assert not gc.isenabled()  # paused while built
        assert gc.get_freeze_count() >= 2 * len(built) and gc.isenabled()
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    gc.freeze()  # someone else's frozen objects are not ours to thaw
    try:
        with thawing(), frozen():
            built = [{"k": [i]} for i in range(10)]
        assert gc.get_freeze_count() > 0  # not thawed
    finally:
        gc.unfreeze()


def test_a_replay_hands_what_it_froze_back_to_the_collector(tmp_path: Path) -> None:
    import gc

    import pytest

    from mcp_replay_action.errors import CassetteError
    from mcp_replay_action.plan import Plan
    from mcp_replay_action.replay.engine import run
    from mcp_replay_action.transport import Target

    calc = Target(command=(sys.executable, "-m", "mcp_replay_action.samples.calc_server"))
    assert gc.get_freeze_count() == 0
    assert run(Plan(paths=(str(ROOT / "cassettes/calc/session.jsonl"),), target=calc)).report.gate.passed
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    (tmp_path / "bad.jsonl").write_text('{"schema": "mcp-replay/cassette@1", "meta": {}}\n[1]\n')
    with pytest.raises(CassetteError):
        run(Plan(paths=(str(tmp_path / "bad.jsonl"),), target=calc))
    assert gc.get_freeze_count() == 0 and gc.isenabled()


def test_the_quick_exit_after_a_replay_prints_writes_and_exits_as_the_usual_exit_does(tmp_path: Path) -> None:
    cassette = str(ROOT / "cassettes/calc/session.jsonl")
    marker = tmp_path / "atexit-ran"
    for server_module, code in (("calc_server", 0), ("calc_server_regressed", 1)):
        server = f"{sys.executable} -m mcp_replay_action.samples.{server_module}"
        runs = []
        for how in ("quick", "usual"):
            report = tmp_path / f"{how}-{code}.json"
            args = ["replay", "--cassette", cassette, "--server", server, "--report", str(report)]
            if how == "quick":  # the console script's way, with an exit handler of someone else's
                prelude = f"import atexit; atexit.register(lambda: open({str(marker)!r}, 'w').write('ran'))\n"
                program = prelude + "from mcp_replay_action.cli import entry\nentry()\n"
            else:
                program = "from mcp_replay_action.cli import main\nmain()\n"
            done = subprocess.run(
                [sys.executable, "-c", program, *args], capture_output=True, text=True, timeout=120, check=False
            )
            facts = json.loads(report.read_text())
            runs.append((done.returncode, done.stdout, done.stderr, facts["score"], facts["gate"]))
        assert runs[0] == runs[1] and runs[0][0] == code, runs
        assert marker.read_text() == "ran"
        marker.unlink()


def test_a_replay_run_under_a_profiler_still_leaves_its_profile(tmp_path: Path) -> None:
    """``python -m cProfile -o F -m mcp_replay_action replay ...`` writes F after the program
    returns: the quick exit must leave that to the usual end."""
    profile = tmp_path / "replay.prof"
    server = f"{sys.executable} -m mcp_replay_action.samples.calc_server"
    done = subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "mcp_replay_action", "replay"]
        + ["--cassette", str(ROOT / "cassettes/calc/session.jsonl"), "--server", server],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert profile.stat().st_size > 0


def test_the_unused_rule_warning_reads_a_large_cassette_a_line_at_a_time(tmp_path: Path, monkeypatch: Any) -> None:
    import tracemalloc

    from mcp_replay_action.cassette import jsonl
    from mcp_replay_action.plan import Plan
    from mcp_replay_action.replay.engine import unused_rules_in

    header = {"schema": "mcp-replay/cassette@1", "meta": {"transport": "stdio"}}
    lines = [json.dumps(header)]
    for i in range(3000):
        request = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/list"}
        lines.append(json.dumps({"seq": i, "kind": "request", "message": request, "response": answer(records(20))}))
    path = tmp_path / "long.jsonl"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(jsonl, "STREAM_ABOVE_BYTES", 0)  # treat it as a large one
    size = path.stat().st_size
    options = CompareOptions(ignore_keys=("tagz-never-there",))
    tracemalloc.start()
    try:
        unused = unused_rules_in(Plan(paths=(str(path),), compare=options))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert unused == (("--ignore-key", "tagz-never-there"),)
    # Loaded whole, the parsed interactions take several times the file; streamed, one at a time.
    assert peak < size / 4, (peak, size)


def test_a_long_recording_read_ahead_loads_the_compare_engine_while_the_server_works(tmp_path: Path) -> None:
    # A slow server owes an answer whose recording holds a long JSON text: the replay reads it
    # ahead, and last imports compare and noise, so that a live answer that differs is compared
    # and confirmed without those imports on the way (an answer that is its recording needs
    # neither, nor carry).
    from mcp_replay_action.transport.process import usable_cpus
    from mcp_replay_action.values.limits import Limits

    if usable_cpus() < 2:
        pytest.skip("reading ahead needs a second CPU")
    slow = [sys.executable, str(ROOT / "tests/fakes/echo_server.py"), "--delay", "0.8"]
    records = [{"name": f"item-{i}", "score": i % 7} for i in range(Limits().read_ahead_chars // 30)]
    calls = [{"method": "tools/call", "params": {"name": "echo", "arguments": {"records": records}}}]
    _record_calc(tmp_path / "long.jsonl", calls, slow)
    server = " ".join(slow)
    done, modules = loaded_after_cli(
        "replay", "--cassette", str(tmp_path / "long.jsonl"), "--server", server, fast=True
    )
    assert "GRADE A" in done.stdout and "2 passed" in done.stdout, done.stdout + done.stderr
    assert "mcp_replay_action.compare.engine" in modules and "mcp_replay_action.compare.noise" in modules
    assert "mcp_replay_action.compare.carry" not in modules


def test_the_switch_turns_one_named_path_off_and_leaves_the_others() -> None:
    """``MCP_REPLAY_FAST=-name,...`` turns just those paths off (how ``docs/ARCHITECTURE.md``'s
    table of what each path earns was measured); ``0`` turns every one off; a wrong name is a
    one-line error naming the known ones."""
    from mcp_replay_action.errors import ConfigError
    from mcp_replay_action.values.limits import PATHS, Limits

    assert Limits.from_env({}) == Limits() and Limits.from_env({"MCP_REPLAY_FAST": "0"}) == Limits(fast=False)
    for name, turn_off in PATHS.items():
        limits = Limits.from_env({"MCP_REPLAY_FAST": f"-{name}"})
        assert limits.fast and limits == turn_off(Limits())
        changed = {f for f, v in vars(limits).items() if v != getattr(Limits(), f)}
        assert len(changed) == 1, (name, changed)  # that path's field alone
    both = Limits.from_env({"MCP_REPLAY_FAST": "-narrow, -learn"})
    assert both == PATHS["learn"](PATHS["narrow"](Limits())) and both.narrow_min_chars > 1 << 40
    with pytest.raises(ConfigError, match="no fast path named 'narow'.*read_ahead"):
        Limits.from_env({"MCP_REPLAY_FAST": "-narow"})


def test_architecture_lists_every_fast_path_with_its_row() -> None:
    """docs/ARCHITECTURE.md's table of fast paths names each path ``PATHS`` switches, and no other:
    a path added or deleted changes the table in the same commit."""
    from mcp_replay_action.values.limits import PATHS

    text = (Path(__file__).parent.parent / "docs" / "ARCHITECTURE.md").read_text("utf-8")
    table = text.split("#### The fast paths, and the row each one earns", 1)[1].split("\n\n")[2]
    listed = [line.split("|")[1].strip().strip("`") for line in table.splitlines()[2:]]
    assert listed == list(PATHS)
