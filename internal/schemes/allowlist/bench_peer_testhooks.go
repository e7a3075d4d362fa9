//go:build testhooks

package allowlist

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
)

// peerVersion is the unsandboxed peer measured side by side: mcp-server-commands (npm, Node,
// no isolation at all). Its run_command hands "wc in.txt" to /bin/sh (Node's exec), whose
// last command is exec'd: a fork of Node and two execs per call.
const peerVersion = "mcp-server-commands@0.5.0"

// peerRun is the installed peer: node and its entry point, started in the workspace (as an
// outside client starts it), so the call's argument is the same `wc in.txt` as ours.
type peerRun struct {
	node, entry, prefix, ws string
}

// cmd starts the peer the way a client configured with it does, minus npx: node runs its
// installed entry point directly (npx's resolution, ~200 ms, would count in the start rows).
func (p *peerRun) cmd() *exec.Cmd {
	c := exec.Command(p.node, p.entry)
	c.Dir, c.Env = p.ws, clientEnv()
	return c
}

// installPeer installs the peer into a temporary prefix with npm; it returns why it cannot
// when npm or node is missing or the install fails (no registry).
func installPeer(ctx context.Context, dir, ws string) (*peerRun, error) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return nil, fmt.Errorf("npm not found: install Node.js to compare")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("node not found")
	}
	prefix := filepath.Join(dir, "peer")
	ictx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	inst := exec.CommandContext(ictx, npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", "--silent", peerVersion)
	if out, err := inst.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("npm install %s: %v %s", peerVersion, err, strings.TrimSpace(string(out)))
	}
	return &peerRun{node: node, entry: filepath.Join(prefix, "node_modules", "mcp-server-commands", "build", "index.js"), prefix: prefix, ws: ws}, nil
}

// tsClient is the independent client: the official TypeScript MCP SDK (the version the peer
// depends on, from its install), none of our code on its path. It alternates calls between the
// servers it is given, after the same warm-up, and prints each one's starts and calls in ms.
const tsClient = `import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { performance } from "node:perf_hooks";
const spec = JSON.parse(process.argv[2]);
async function open(s) {
  const c = new Client({ name: "bench-ts", version: "1" });
  await c.connect(new StdioClientTransport({ command: s.command, args: s.args, cwd: s.cwd, stderr: "ignore" }));
  return c;
}
const out = spec.servers.map(() => ({ starts: [], calls: [] }));
for (let i = 0; i < spec.starts; i++) {
  for (const [j, s] of spec.servers.entries()) {
    const t0 = performance.now();
    const c = await open(s);
    await c.listTools();
    out[j].starts.push(performance.now() - t0);
    await c.close(); // kills the server and returns at once: let it exit before the next start
    await new Promise((r) => setTimeout(r, 200));
  }
}
const cs = [];
for (const s of spec.servers) cs.push(await open(s));
for (let i = -spec.warm; i < spec.n; i++) {
  for (const [j, s] of spec.servers.entries()) {
    const t0 = performance.now();
    const r = await cs[j].callTool({ name: s.tool, arguments: s.arguments });
    const d = performance.now() - t0;
    if (r.isError) { console.error(JSON.stringify(r)); process.exit(1); }
    if (i >= 0) out[j].calls.push(d);
  }
}
for (const c of cs) await c.close();
console.log(JSON.stringify(out));
`

// crossCheck measures ours and the peer again with the TypeScript SDK's client, interleaved:
// its rows sit beside the Go client's, so a skeptic sees whether our client flatters either.
func crossCheck(ctx context.Context, b *scheme.BenchRun, pr *peerRun, pol string) error {
	script := filepath.Join(pr.prefix, "bench-client.mjs") // beside the SDK it imports
	if err := os.WriteFile(script, []byte(tsClient), 0o644); err != nil {
		return err
	}
	var sdk struct{ Version string }
	raw, err := os.ReadFile(filepath.Join(pr.prefix, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	if err != nil {
		return fmt.Errorf("the peer's install has no TypeScript SDK: %w", err)
	}
	json.Unmarshal(raw, &sdk)
	type server struct {
		Command   string         `json:"command"`
		Args      []string       `json:"args"`
		Cwd       string         `json:"cwd"`
		Tool      string         `json:"tool"`
		Arguments map[string]any `json:"arguments"`
	}
	spec, _ := json.Marshal(map[string]any{"n": min(b.N, 100), "warm": warmUp, "starts": 10, "servers": []server{
		{b.Bin, []string{"serve", "--policy", pol, "--log-level", "error"}, pr.ws, ourCall().Name, ourCall().Arguments.(map[string]any)},
		{pr.node, []string{pr.entry}, pr.ws, peerCall().Name, peerCall().Arguments.(map[string]any)}}})
	cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(cctx, pr.node, script, string(spec)).Output()
	if err != nil {
		return fmt.Errorf("node %s: %w: %s", script, err, stderrOf(err))
	}
	var res []struct{ Starts, Calls []float64 }
	if err := json.Unmarshal(out, &res); err != nil || len(res) != 2 {
		return fmt.Errorf("the TypeScript client printed %q: %v", out, err)
	}
	client := "; client: TypeScript MCP SDK " + sdk.Version + " (node), stdio"
	b.Row("cross-check: run_allowed_command wc "+benchFile+", warm, back-to-back"+client, ms(res[0].Calls))
	b.Row("cross-check: peer run_command \"wc "+benchFile+"\", warm, back-to-back"+client, ms(res[1].Calls))
	b.Row("cross-check: serve start -> initialize + tools/list answered"+client, ms(res[0].Starts))
	b.Row("cross-check: peer start -> initialize + tools/list answered"+client, ms(res[1].Starts))
	return nil
}

func ms(f []float64) []time.Duration {
	d := make([]time.Duration, len(f))
	for i, v := range f {
		d[i] = time.Duration(v * float64(time.Millisecond))
	}
	return d
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}
