// Usage: node client.mjs MCPSANDBOX_BIN POLICY_FILE
// Connects with the official TypeScript SDK over stdio, lists tools, makes an allowed and a
// refused call, and prints one JSON object with what it saw.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, policy] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: bin, args: ["serve", "--policy", policy], stderr: "inherit" });
const client = new Client({ name: "ts-e2e", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
const ok = await client.callTool({ name: "run_allowed_command", arguments: { command: "wc", args: ["-l", "notes.txt"] } });
const refused = await client.callTool({ name: "run_allowed_command", arguments: { command: "cat", args: ["/etc/passwd"] } });
console.log(JSON.stringify({
  server: client.getServerVersion(),
  tools: tools.tools.map((t) => ({ name: t.name, enum: t.inputSchema.properties.command.enum, hasOutputSchema: !!t.outputSchema })),
  ok: { isError: !!ok.isError, structured: ok.structuredContent, text: ok.content[0].text },
  refused: { isError: !!refused.isError, text: refused.content[0].text },
}));
await client.close();
