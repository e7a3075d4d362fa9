// Usage: node client_http.mjs URL TOKEN
// The official TypeScript SDK client over streamable HTTP: lists tools, makes an allowed and a
// refused call, and prints one JSON object with what it saw.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "ts-e2e-http", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
const ok = await client.callTool({ name: "run_allowed_command", arguments: { command: "wc", args: ["-l", "notes.txt"] } });
const refused = await client.callTool({ name: "run_allowed_command", arguments: { command: "cat", args: ["/etc/passwd"] } });
console.log(JSON.stringify({
  server: client.getServerVersion(),
  sessionId: transport.sessionId,
  tools: tools.tools.map((t) => ({ name: t.name, hasOutputSchema: !!t.outputSchema })),
  ok: { isError: !!ok.isError, structured: ok.structuredContent },
  refused: { isError: !!refused.isError, text: refused.content[0].text },
}));
await transport.terminateSession();
await client.close();
