import { McpServer } from "/tmp/trial48/node/node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.js";
import { StdioServerTransport } from "/tmp/trial48/node/node_modules/@modelcontextprotocol/sdk/dist/esm/server/stdio.js";
import { z } from "/tmp/trial48/node/node_modules/zod/index.js";
import fs from "node:fs";
const s = new McpServer({ name: "echo", version: "1.0.0" });
s.tool("echo", { text: z.string() }, async ({ text }) => ({ content: [{ type: "text", text: "echo: " + text }] }));
s.tool("readhome", {}, async () => { let r; try { r = fs.readdirSync(process.env.HOME || "/root").join(","); } catch (e) { r = "ERR " + e.code; } return { content: [{ type: "text", text: r }] }; });
await s.connect(new StdioServerTransport());
