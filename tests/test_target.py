"""``Target`` and ``open_transport``: the one way every caller reaches a server, and ``setup``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcp_replay_action.errors import ConfigError, ServerStartError
from mcp_replay_action.transport import Target, open_transport
from mcp_replay_action.transport.http_client import HttpTransport
from mcp_replay_action.transport.stdio import StdioTransport

PY = sys.executable
CALC = [PY, "-m", "mcp_replay_action.samples.calc_server"]
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def test_open_transport_picks_stdio_or_http() -> None:
    assert isinstance(open_transport(Target(command=tuple(CALC))), StdioTransport)
    assert isinstance(open_transport(Target(command="python3 -m x")), StdioTransport)
    assert isinstance(open_transport(Target(url="http://127.0.0.1:9/mcp")), HttpTransport)


def test_open_transport_without_command_or_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="--server CMD"):
        open_transport(Target())


def test_describe_never_shows_credentials_or_query() -> None:
    assert Target(url="https://user:pw@example.com:8443/mcp?key=SECRET").describe() == "https://example.com:8443"
    assert Target(command=("node", "dist/index.js", "--name", "a b")).describe() == "node dist/index.js --name 'a b'"


def test_setup_runs_before_every_start_in_the_server_cwd(tmp_path: Path) -> None:
    script = "import pathlib; p = pathlib.Path('count'); p.write_text(str(int(p.read_text() or 0) + 1) if p.exists() else '1')"
    target = Target(command=tuple(CALC), cwd=str(tmp_path), setup=(PY, "-c", script))
    for expected in ("1", "2"):
        transport = open_transport(target)
        transport.start()
        try:
            transport.send(INIT)
            assert transport.receive(10)["id"] == 0
        finally:
            transport.close()
        assert (tmp_path / "count").read_text() == expected


def test_failing_setup_is_a_start_error_with_its_last_line(tmp_path: Path) -> None:
    setup = (PY, "-c", "import sys; print('copying fixture'); sys.exit('memory.json: no such file')")
    transport = open_transport(Target(command=tuple(CALC), cwd=str(tmp_path), setup=setup))
    with pytest.raises(ServerStartError) as caught:
        transport.start()
    transport.close()
    assert "--setup" in str(caught.value) and "status 1" in str(caught.value)
    assert "memory.json: no such file" in str(caught.value)


def test_a_hanging_setup_is_stopped_after_its_timeout(tmp_path: Path) -> None:
    setup = (PY, "-c", "import time; time.sleep(60)")
    transport = open_transport(Target(command=tuple(CALC), setup=setup, setup_timeout=0.5))
    with pytest.raises(ServerStartError, match="did not finish within 0.5 s"):
        transport.start()
    transport.close()


def test_setup_runs_before_an_http_server_start_too(tmp_path: Path) -> None:
    setup = (PY, "-c", "import sys; sys.exit(3)")
    transport = open_transport(Target(url="http://127.0.0.1:9/mcp", command=("true",), setup=setup))
    with pytest.raises(ServerStartError, match="status 3"):
        transport.start()
    transport.close()
