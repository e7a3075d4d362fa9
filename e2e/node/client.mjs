// Usage: node client.mjs MCPSANDBOX_BIN POLICY_FILE
// Connects with the official TypeScript SDK over stdio, lists tools, makes an allowed and a
// refused call, writes and reads a file with the file tools (the SDK checks each structured
// result against the tool's output schema), and prints one JSON object with what it saw.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, policy] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: bin, args: ["serve", "--policy", policy], stderr: "inherit" });
const client = new Client({ name: "ts-e2e", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
const ok = await client.callTool({ name: "run_allowed_command", arguments: { command: "wc", args: ["-l", "notes.txt"] } });
const refused = await client.callTool({ name: "run_allowed_command", arguments: { command: "cat", args: ["/etc/passwd"] } });
const wrote = await client.callTool({ name: "write_file", arguments: { path: "ts/out.bin", content_base64: Buffer.from([0, 1, 2, 255]).toString("base64") } });
const read = await client.callTool({ name: "read_file", arguments: { path: "ts/out.bin" } });
console.log(JSON.stringify({
  server: client.getServerVersion(),
  tools: tools.tools.map((t) => ({ name: t.name, enum: t.inputSchema.properties?.command?.enum, hasOutputSchema: !!t.outputSchema })),
  ok: { isError: !!ok.isError, structured: ok.structuredContent, text: ok.content[0].text },
  refused: { isError: !!refused.isError, text: refused.content[0].text },
  wrote: { isError: !!wrote.isError, structured: wrote.structuredContent },
  read: { isError: !!read.isError, structured: read.structuredContent },
}));
await client.close();
