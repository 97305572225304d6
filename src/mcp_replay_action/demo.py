"""``mcp-replay demo``: the 30-second tour.

Records a real session through the real recording proxy against the bundled sample server, then
replays the cassette against the healthy build and against a regressed twin whose ``tools/list``
is byte-identical but whose behaviour drifted.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_replay_action.cassette import load
from mcp_replay_action.errors import TransportTimeout
from mcp_replay_action.model import JSONObject
from mcp_replay_action.options import plan_from
from mcp_replay_action.plan import make_target
from mcp_replay_action.replay.engine import run
from mcp_replay_action.transport import open_transport
from mcp_replay_action.transport.session import ClientSession, result_answer

if TYPE_CHECKING:
    from mcp_replay_action.model.results import Report

HEALTHY = f"{sys.executable} -m mcp_replay_action.samples.calc_server"
REGRESSED = f"{sys.executable} -m mcp_replay_action.samples.calc_server_regressed"


def demo_answer(request: JSONObject) -> JSONObject:
    """What the demo client answers a server request: one workspace root for ``roots/list``, an
    empty result for anything else."""
    if request.get("method") == "roots/list":
        return result_answer(request, {"roots": [{"uri": "file:///workspace", "name": "workspace"}]})
    return result_answer(request, {})


def record_demo_session(cassette: Path) -> None:
    """Drive a scripted session through ``mcp-replay record`` so the cassette is a real recording."""
    proxy = [sys.executable, "-m", "mcp_replay_action", "record", "--server", HEALTHY, "--cassette", str(cassette)]
    transport = open_transport(make_target(proxy, None, command="demo"))
    transport.start()
    try:
        client = ClientSession(transport, answer=demo_answer, timeout=10.0)
        client.call(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"roots": {}},
                "clientInfo": {"name": "mcp-replay-demo", "version": "1"},
            },
        )
        client.notify("notifications/initialized")
        client.call("tools/list")
        client.call("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
        client.call("tools/call", {"name": "echo", "arguments": {"message": "hello"}})
        client.call("tools/call", {"name": "now", "arguments": {}})
        job = client.call("tools/call", {"name": "start_job", "arguments": {"size": 3}})
        job_id = job["result"]["structuredContent"]["jobId"]
        client.call("tools/call", {"name": "job_status", "arguments": {"jobId": job_id}})
        client.call("tools/call", {"name": "roots", "arguments": {}})
        client.call("resources/read", {"uri": "memo://readme"})
    except TransportTimeout as exc:
        raise TransportTimeout(f"demo recording stalled: {exc}") from None
    finally:
        transport.close()


def run_demo(echo: Callable[[str], None] = print, keep_dir: str | None = None, color: bool = False) -> bool:
    """Run the tour; True when the healthy build grades A and the regressed twin is caught."""
    from mcp_replay_action.report import console

    work = Path(tempfile.mkdtemp(prefix="mcp-replay-demo-"))
    try:
        path = work / "demo.jsonl"
        echo(f"== Recording a session against the sample server ({HEALTHY.split()[-1]}) ==")
        record_demo_session(path)
        cassette = load(path)
        echo(f"   {len(cassette.interactions)} interactions recorded to {path.name}\n")

        def replayed(server: str) -> Report:
            # The run `mcp-replay replay --server SERVER --cassette demo.jsonl --timeout 10
            # --startup-timeout 15` makes: its confirmation pass and its gate.
            values = {"server": server, "cassettes": (str(path),), "timeout": 10.0, "startup_timeout": 15.0}
            return run(plan_from(values, root=str(work), command="demo")).report

        echo("== Replay against the HEALTHY server (expect grade A, no regressions) ==")
        healthy = replayed(HEALTHY)
        echo(console.render(healthy, color=color))
        echo("== Replay against the REGRESSED server (same tools/list, changed behaviour) ==")
        regressed = replayed(REGRESSED)
        echo(console.render(regressed, color=color))

        kinds = {f.kind for c in regressed.cassettes for r in c.results for f in r.findings}
        echo(
            "tools/list is byte-for-byte identical between the two builds, so a schema diff sees nothing;\n"
            f"replay caught: {', '.join(sorted(kinds)) or 'nothing'}."
        )
        if keep_dir:
            Path(keep_dir).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(keep_dir) / path.name)
            echo(f"cassette kept at {Path(keep_dir) / path.name}")
        healthy_ok = healthy.score.grade == "A" and healthy.failed == 0 and healthy.missing == 0
        return healthy_ok and {"value-change", "structure-change"} <= kinds
    finally:
        shutil.rmtree(work, ignore_errors=True)
