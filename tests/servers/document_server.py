"""A report server that serves one long MCP App page (a document), stamped near its top with the
ISO time it was rendered: where the first difference of a changed document must point past the
noise to the change. Built on the official ``mcp`` SDK (``MCPServer``).

The resource ``ui://report/page.html`` (``text/html;profile=mcp-app``) is ``DOC_MIB`` mebibytes
long (3 by default): the render time in its head, a table of rows, and near its end the sentence
``All rows reconciled.``

- ``DOC_PID=1`` adds the PID that served it near the top (no mask knows a PID: only the
  confirmation pass tells it is noise);
- ``DOC_VARIANT=word`` makes a changed build whose last sentence reads ``All rows rejected.``;
- ``DOC_STARTS``: a file this server appends one line to on every start (a replay's starts are
  counted from it).
"""

from __future__ import annotations

import datetime
import os

from mcp.server.mcpserver import MCPServer

if os.environ.get("DOC_STARTS"):
    with open(os.environ["DOC_STARTS"], "a", encoding="utf-8") as starts:
        starts.write(f"{os.getpid()}\n")

MIB = float(os.environ.get("DOC_MIB", "3"))
WORD = "rejected" if os.environ.get("DOC_VARIANT") == "word" else "reconciled"
server = MCPServer("report-pages", version="1.0.0", log_level="WARNING")


@server.resource("ui://report/page.html", mime_type="text/html;profile=mcp-app")
def page() -> str:
    """The report page, rendered now."""
    now = datetime.datetime.now(datetime.UTC).isoformat()
    head = f'<!doctype html><html><head><meta name="rendered" content="{now}"></head><body>\n'
    if os.environ.get("DOC_PID") == "1":
        head += f"<p>served by worker pid {os.getpid()}</p>\n"
    row = "<tr><td>{:07d}</td><td>steady value</td><td>in the ledger</td></tr>\n"
    rows = "".join(row.format(i) for i in range(int(MIB * (1 << 20)) // len(row.format(0))))
    return f"{head}<table>\n{rows}</table>\n<p>All rows {WORD}.</p>\n</body></html>\n"


if __name__ == "__main__":
    server.run()
