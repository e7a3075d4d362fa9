// one MCP session (stdio or HTTP) against a docker reuse="session" policy: state across calls, file tools in the session
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
const [mode, a1] = process.argv.slice(2);
const transport = mode === "http"
  ? new StreamableHTTPClientTransport(new URL(a1), { requestInit: { headers: { Authorization: `Bearer ${process.env.MCPSANDBOX_TOKEN}` } } })
  : new StdioClientTransport({ command: process.env.HOME + "/bin/mcpsandbox", args: ["serve", "--policy", a1], stderr: "ignore" });
const c = new Client({ name: "sess", version: "1" });
await c.connect(transport);
const call = async (name, args) => { const r = await c.callTool({ name, arguments: args }); console.log(`-- ${name} ${JSON.stringify(args).slice(0,80)}\n   isError=${!!r.isError} ${r.content.map(x => x.text ?? x.type).join(" | ").slice(0, 400).replace(/\n/g, "\\n")}`); };
await call("run_python_sandbox", { code: "x = 41" });
await call("run_python_sandbox", { code: "print(x + 1)" });
await call("write_file", { path: "/tmp/s.txt", content: "session file" });
await call("read_file", { path: "/tmp/s.txt" });
await call("run_shell_sandbox", { script: "cat /tmp/s.txt; ls /workspace 2>&1 | head -3" });
await call("write_file", { path: "notes.txt", content: "relative" });
await call("list_files", {});
await call("run_python_sandbox", { code: "print(x)", reset: true });
await c.close();
