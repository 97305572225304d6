// A local stand-in for tavily-mcp's build (`node build/index.js`), so the scenarios file that
// project ships (integration/scenarios.yml) records unchanged here: the real server needs an API
// key and the internet. It answers the four tools that file calls, with the official TypeScript
// SDK over stdio, and fixed answers of its own (the real ones are not known here).
"use strict";
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { z } = require("zod");

const server = new McpServer({ name: "tavily-mcp stand-in", version: "0.1.0" });
const text = (value) => ({ content: [{ type: "text", text: value }] });

server.registerTool(
  "tavily_search",
  { description: "Search the web (stand-in).", inputSchema: { query: z.string() } },
  async ({ query }) => text(`Results for ${JSON.stringify(query)}: example.com, example.org`),
);
server.registerTool(
  "tavily_extract",
  { description: "Extract pages (stand-in).", inputSchema: { urls: z.array(z.string()) } },
  async ({ urls }) => text(urls.map((url) => `${url}: Example Domain`).join("\n")),
);
server.registerTool(
  "tavily_map",
  { description: "Map a site (stand-in).", inputSchema: { url: z.string() } },
  async ({ url }) => text(`${url}\n${url}/about`),
);
server.registerTool(
  "tavily_crawl",
  { description: "Crawl a site (stand-in).", inputSchema: { url: z.string() } },
  async ({ url }) => text(`${url}: 1 page, Example Domain`),
);

server.connect(new StdioServerTransport()).catch((error) => {
  console.error(error);
  process.exit(1);
});
