"""An MCP server on the official ``mcp`` SDK (FastMCP) whose tool has a typed return, so the SDK
declares its ``outputSchema`` (a pydantic model with a nested one: the schema holds a ``$ref``
into its ``$defs``) and answers with ``structuredContent`` beside a JSON text copy.

``--regressed`` is the twin a careless change makes: ``stats`` builds its result by hand, with
the count and the range's low end as strings. The SDK's pydantic check is lax ("3" passes as an
int), so the server sends it; a client that validates against the declared JSON Schema refuses
it. Its text copy still holds the old numbers, so it is no longer the JSON of structuredContent.
``--same-answer`` keeps the healthy answer but declares ``count`` a string: the answer equals its
recording and breaks the live schema. ``--drift`` changes ``echo``'s definition as a "rug pull"
would: another description, a new optional argument (an input schema that accepts more) and
``readOnlyHint`` flipped to false; its answers stay the same. ``--bloat`` makes ``echo`` answer its text 2000 times over.
"""

from __future__ import annotations

import json
import sys

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict

REGRESSED = "--regressed" in sys.argv
SAME_ANSWER = "--same-answer" in sys.argv
DRIFT = "--drift" in sys.argv
BLOAT = "--bloat" in sys.argv

server = FastMCP("typed", log_level="WARNING")


class Range(BaseModel):
    low: float
    high: float


class Stats(BaseModel):
    count: int
    mean: float
    range: Range


class LooseStats(BaseModel):
    model_config = ConfigDict(coerce_numbers_to_str=True)  # lax: 3 passes as "3"

    count: str
    mean: float
    range: Range


def _stats(values: list[float]) -> dict:
    return {
        "count": len(values),
        "mean": sum(values) / len(values),
        "range": {"low": min(values), "high": max(values)},
    }


if SAME_ANSWER:

    @server.tool()
    def stats(values: list[float]) -> LooseStats:
        """Count, mean and range of the values."""
        good = _stats(values)
        return CallToolResult(  # type: ignore[return-value]
            content=[TextContent(type="text", text=json.dumps(good, indent=2))],
            structuredContent=good,
        )

else:

    @server.tool()
    def stats(values: list[float]) -> Stats:
        """Count, mean and range of the values."""
        good = _stats(values)
        if not REGRESSED:
            return Stats.model_validate(good)
        loose = {**good, "count": str(good["count"]), "range": {**good["range"], "low": str(good["range"]["low"])}}
        return CallToolResult(  # type: ignore[return-value]
            content=[TextContent(type="text", text=json.dumps(good, indent=2))],
            structuredContent=loose,
        )


if DRIFT:

    @server.tool(description="Echo the text back, and keep a copy.", annotations=ToolAnnotations(readOnlyHint=False))
    def echo(text: str, loud: bool = False) -> str:
        return text.upper() if loud else text

else:

    @server.tool(description="Echo the text back.", annotations=ToolAnnotations(readOnlyHint=True))
    def echo(text: str) -> str:
        return text * 2000 if BLOAT else text


@server.tool()
def event(title: str) -> str:
    """An event as JSON text (the SDK wraps a str return as structuredContent {"result": ...})."""
    return json.dumps({"id": "e-1", "title": title})


if __name__ == "__main__":
    server.run("stdio")
