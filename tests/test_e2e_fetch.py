"""A third-party fetch server nobody here wrote (PyPI ``mcp-server-fetch``), recorded with the
official SDK client through ``mcp-replay record`` while it fetches a page from a real HTTP server
on 127.0.0.1, then replayed three times unchanged with no options: not one finding. A page that
really changed between recording and replay is caught."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import SERVERS, command, passed, record_through_proxy, replay

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

REPLAYS = 3
FETCH = SERVERS / ".venv-fetch" / "bin" / "python"
PAGE = (
    "<html><head><title>Release notes</title></head><body><h1>Release notes</h1>"
    "<p>Version 2 adds <b>streaming</b> and fixes three bugs.</p><ul><li>alpha</li><li>beta</li></ul></body></html>"
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    root = tmp_path_factory.mktemp("site")
    (root / "notes.html").write_text(PAGE, encoding="utf-8")

    class Quiet(SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}/notes.html"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def fetch_server() -> str:
    # robots.txt is a 404 here anyway; 127.0.0.1 is a private address the server refuses by default
    return command(FETCH, "-m", "mcp_server_fetch", "--ignore-robots-txt", "--allow-private-ips")


@pytest.fixture(scope="module")
def cassette(site: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not FETCH.exists():
        pytest.skip("mcp-server-fetch is not installed: tests/run.sh (tests/servers/requirements-fetch.txt)")
    _, url = site

    async def session(client: Client) -> dict[str, Any]:
        await client.list_tools()
        page = await client.call_tool("fetch", {"url": url})
        raw = await client.call_tool("fetch", {"url": url, "raw": True})
        await client.list_prompts()
        text = page.content[0].text  # type: ignore[union-attr]
        assert "streaming" in text and "alpha" in text, text
        return {"raw": raw.content[0].text}  # type: ignore[union-attr]

    path = tmp_path_factory.mktemp("fetch") / "fetch.jsonl"
    seen = record_through_proxy(fetch_server(), path, session)
    assert "<li>beta</li>" in seen["raw"], seen
    return path


def test_the_fetch_server_replays_clean_three_times(cassette: Path, tmp_path: Path) -> None:
    for attempt in range(REPLAYS):
        run = replay(fetch_server(), cassette, report=tmp_path / f"fetch-{attempt}.json", gate=False)
        assert run.report is not None, run.describe()
        assert run.findings() == [], run.describe()
        assert all(passed(i) for i in run.interactions()), run.describe()
        assert run.code == 0, run.describe()


def test_a_changed_page_is_caught(site: tuple[Path, str], cassette: Path, tmp_path: Path) -> None:
    root, _ = site
    page = root / "notes.html"
    page.write_text(PAGE.replace("three bugs", "four bugs"), encoding="utf-8")
    try:
        run = replay(fetch_server(), cassette, report=tmp_path / "changed.json", gate=False)
    finally:
        page.write_text(PAGE, encoding="utf-8")
    changed = {i["method"] + " " + str(i.get("subject")) for i in run.interactions() if not passed(i)}
    assert len(changed) >= 1 and run.findings(), run.describe()
    assert all(f["kind"] == "value-change" for f in run.findings()), run.describe()
