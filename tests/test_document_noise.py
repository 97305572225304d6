"""A long document with noise and a real change: the finding's first difference is the first
character no mask and no learned noise explains.

End to end on ``tests/servers/document_server.py`` (official SDK), whose MCP App page of 3 MiB
carries the ISO time it was rendered near its top, recorded with the SDK client through
``mcp-replay record``:

* replayed unchanged, it passes on one server start (the time is masked, nothing is confirmed);
* a build that changes the last sentence's word fails, and the finding names that word and its
  place, not the render time;
* with the PID that served it near the top too (learned as noise by the confirmation pass), the
  finding still names the word, not the PID.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import PYTHON, SERVERS, command, record_through_proxy, replay

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

SERVER = SERVERS / "document_server.py"
PLAIN = command(PYTHON, SERVER)
WITH_PID = command("/usr/bin/env", "DOC_PID=1", PYTHON, SERVER)
PAGE = "ui://report/page.html"


async def read_page(client: Client) -> dict[str, Any]:
    read = await client.read_resource(PAGE)
    text = getattr(read.contents[0], "text", "")
    assert len(text) > 3_000_000 and "All rows reconciled." in text[-100:], len(text)
    return {}


@pytest.fixture(scope="module")
def cassettes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("document")
    out = {"plain": where / "plain.jsonl", "pid": where / "pid.jsonl"}
    record_through_proxy(PLAIN, out["plain"], read_page)
    record_through_proxy(WITH_PID, out["pid"], read_page)
    return out


def _page_finding(run: Any) -> dict[str, Any]:
    [read] = [i for i in run.interactions() if i["method"] == "resources/read"]
    assert read["status"] == "fail", run.describe()
    [finding] = read["findings"]
    return dict(finding)


def _at(finding: dict[str, Any]) -> int:
    return int(finding["message"].rsplit("first difference at character ", 1)[1].split()[0].rstrip(","))


def test_a_page_whose_render_time_alone_differs_passes_on_one_start(cassettes: dict[str, Path], tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    run = replay(PLAIN, cassettes["plain"], "--env", f"DOC_STARTS={starts}", report=tmp_path / "same.json")
    assert run.code == 0, run.describe()
    assert run.findings() == [], run.describe()
    assert len(starts.read_text().splitlines()) == 1, run.describe()  # no confirmation pass


@pytest.mark.parametrize("cassette", ["plain", "pid"])
def test_a_changed_word_near_the_end_is_the_first_difference_shown(
    cassettes: dict[str, Path], cassette: str, tmp_path: Path
) -> None:
    server = PLAIN if cassette == "plain" else WITH_PID
    run = replay(server, cassettes[cassette], "--env", "DOC_VARIANT=word", report=tmp_path / "word.json", gate=False)
    assert run.code == 1, run.describe()
    finding = _page_finding(run)
    assert finding["message"].startswith("document changed: "), finding
    # The word, not the render time at the top, nor the PID the confirmation pass learned there.
    assert "reconciled" in finding["before"] and "rejected" in finding["after"], finding
    assert "<timestamp>" not in finding["before"] and "pid" not in finding["before"], finding
    assert "[-reconciled-]{+rejected+}" in finding["diff"], finding
    assert _at(finding) > 3 * (1 << 20), finding  # near the end of a 3 MiB page
    [read] = [i for i in run.interactions() if i["method"] == "resources/read"]
    if cassette == "pid":
        assert read["noise"] == [], read  # the PID's window does not explain the changed word
