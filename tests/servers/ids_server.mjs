// An MCP server on the official TypeScript SDK (@modelcontextprotocol/sdk, McpServer) that mints
// ids under plain keys the way a Node server does: crypto.randomUUID(), base36 and hex ids, an
// integer from a random base, in structuredContent, JSON text and prose. The client quotes each
// back. The Python twin is ids_server.py; tests/test_threading.py replays both.
import { randomBytes, randomInt, randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "ids-store-ts", version: "1.0.0" });
const things = new Map();
let counter = randomInt(100_000_000, 999_999_999);
const base36 = (n) => Array.from({ length: n }, () => randomInt(36).toString(36)).join("");

function known(key) {
  if (!things.has(String(key))) throw new Error(`unknown id ${key}`);
  return things.get(String(key));
}

server.registerTool(
  "create_item",
  {
    description: "Create an item: a base36 id and a UUID ref.",
    inputSchema: { title: z.string() },
    outputSchema: { id: z.string(), ref: z.string(), title: z.string() },
  },
  async ({ title }) => {
    const item = { id: `itm_${base36(12)}`, ref: randomUUID(), title };
    things.set(item.id, title);
    things.set(item.ref, title);
    return { content: [{ type: "text", text: JSON.stringify(item) }], structuredContent: item };
  },
);

server.registerTool(
  "get_item",
  { description: "An item by id and ref.", inputSchema: { id: z.string(), ref: z.string() } },
  async ({ id, ref }) => {
    known(ref);
    return { content: [{ type: "text", text: `Item ${id}: ${known(id)}` }] };
  },
);

server.registerTool(
  "create_order",
  { description: "Place an order: its id and number only in prose.", inputSchema: { what: z.string() } },
  async ({ what }) => {
    const order = `ord_${randomBytes(6).toString("hex")}`;
    counter += 1;
    things.set(order, what);
    things.set(String(counter), what);
    return { content: [{ type: "text", text: `Order ${order} placed as number ${counter} for ${what}.` }] };
  },
);

server.registerTool(
  "get_order",
  { description: "An order by id and number.", inputSchema: { order: z.string(), number: z.number().int() } },
  async ({ order, number }) => ({
    content: [{ type: "text", text: `Order ${order} (${number}): ${known(order)} / ${known(number)}` }],
  }),
);

await server.connect(new StdioServerTransport());
