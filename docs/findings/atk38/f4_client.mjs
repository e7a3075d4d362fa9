// atk38 F4: the official TypeScript MCP SDK client (1.32.2, e2e/node/node_modules) talking to
// `mcpsandbox wrap` around the hostile server in "bom" mode.
// Usage: node f4_client.mjs MCPSANDBOX_BIN POLICY SERVER_SCRIPT
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const [bin, policy, script] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: bin, args: ["wrap", "--policy", policy, "--", "/usr/bin/python3", script, "bom"], stderr: "pipe" });
const client = new Client({ name: "ts-atk38", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
console.log("listTools ->", JSON.stringify(tools.tools.map((t) => t.name)), "(policy: deny secret_*, hide_denied = true)");
const r = await client.callTool({ name: "hello", arguments: { x: 1 } });
console.log("callTool hello ->", JSON.stringify(r));
await new Promise((res) => setTimeout(res, 4000)); // past limits.timeout (3s): the relay's own timeout
await client.close();
