"""An order-placing MCP server written as a user of the official ``mcp`` SDK writes one
(``MCPServer``, the FastMCP API): its tools report progress and log through the request's
``Context``, so a tool call is answered with notifications around it. Run it as a script (stdio).

``SHOP_SERVER_VARIANT`` (comma-separated) makes a drifted build for the notification tests:
``quiet`` (``place_order`` reports no progress), ``fraud`` (its ``info: placing order`` log
becomes ``warning: order REJECTED by fraud check``), ``chatty`` (one more debug log line),
``untitled`` (``item_info``'s structured output loses its ``title`` field, and so its outputSchema
the property named ``title``).
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

VARIANT = {flag.strip() for flag in os.environ.get("SHOP_SERVER_VARIANT", "").split(",") if flag.strip()}

server = MCPServer("shop", version="1.0.0", log_level="WARNING")


@server.tool()
async def place_order(item: str, quantity: int, ctx: Context) -> str:
    """Place an order, reporting progress through each step."""
    if "fraud" in VARIANT:
        await ctx.warning("order REJECTED by fraud check")
    else:
        await ctx.info("placing order")
    if "chatty" in VARIANT:
        await ctx.debug(f"{quantity} x {item}")
    steps = ("reserve stock", "charge card", "ship")
    for i, step in enumerate(steps, start=1):
        if "quiet" not in VARIANT:
            await ctx.report_progress(i, len(steps), step)
    return f"ordered {quantity} x {item}"


@server.tool()
def price(item: str) -> int:
    """The price of an item, in cents."""
    return 100 * len(item)


class Item(BaseModel):
    sku: str
    title: str


class UntitledItem(BaseModel):
    sku: str


if "untitled" in VARIANT:

    @server.tool()
    def item_info(item: str) -> UntitledItem:
        """What the shop knows of an item."""
        return UntitledItem(sku=item.upper())

else:

    @server.tool()
    def item_info(item: str) -> Item:
        """What the shop knows of an item."""
        return Item(sku=item.upper(), title=item.title())


if __name__ == "__main__":
    server.run()
