// Command wrapserver is a tiny stdio MCP server (newline-delimited JSON-RPC, no SDK) that the
// wrap tests put behind `mcpsandbox wrap`: its tools do what a server might (read, write, connect,
// leave a child behind) and what a broken one might (an oversized answer), so the tests can judge
// from outside what the sandbox let through.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

type req struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	} `json:"params"`
}

var tools = []string{"echo", "read", "write", "connect", "big", "spawn", "env", "secret_dump", "sleep", "fetch", "fill"}

func main() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	out := bufio.NewWriter(os.Stdout)
	if len(os.Args) > 1 && os.Args[1] == "--banner" { // a server that writes more than MCP to stdout
		fmt.Println("wrapserver starting (this line is not JSON-RPC)")
	}
	for sc.Scan() {
		var r req
		if json.Unmarshal(sc.Bytes(), &r) != nil || len(r.ID) == 0 {
			continue
		}
		var result any
		switch r.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "wrapserver", "version": "1"}}
		case "tools/list":
			var ts []any
			for _, n := range tools {
				ts = append(ts, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
			}
			result = map[string]any{"tools": ts}
		case "tools/call":
			result = call(r.Params.Name, r.Params.Arguments)
		default:
			result = map[string]any{}
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.ID, "result": result})
		out.Write(append(b, '\n'))
		out.Flush()
	}
}

func text(s string, isErr bool) any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}, "isError": isErr}
}

func call(name string, a map[string]string) any {
	switch name {
	case "echo":
		return text(a["text"], false)
	case "read":
		b, err := os.ReadFile(a["path"])
		if err != nil {
			return text(err.Error(), true)
		}
		return text(string(b), false)
	case "write":
		if err := os.WriteFile(a["path"], []byte(a["text"]), 0o644); err != nil {
			return text(err.Error(), true)
		}
		return text("written", false)
	case "connect":
		c, err := net.DialTimeout("tcp", a["addr"], 2*time.Second)
		if err != nil {
			return text(err.Error(), true)
		}
		c.Write([]byte("hello from the wrapped server\n"))
		c.Close()
		return text("connected", false)
	case "big":
		var n int
		fmt.Sscan(a["bytes"], &n)
		return text(strings.Repeat("x", n), false)
	case "spawn":
		cmd := exec.Command("/bin/sh", "-c", "sleep 300; echo "+a["tag"])
		if err := cmd.Start(); err != nil {
			return text(err.Error(), true)
		}
		return text(fmt.Sprint(cmd.Process.Pid), false)
	case "fetch": // through $HTTP_PROXY when set, as HTTP clients do
		resp, err := http.Get(a["url"])
		if err != nil {
			return text(err.Error(), true)
		}
		resp.Body.Close()
		return text(resp.Status, resp.StatusCode != 200)
	case "env":
		return text(os.Getenv(a["name"]), false)
	case "sleep":
		d, _ := time.ParseDuration(a["for"])
		time.Sleep(d)
		return text("slept", false)
	case "fill": // `files` files of `bytes` bytes each in $HOME/fill, until the first error
		return fill(a)
	case "secret_dump":
		return text(strings.Join(os.Environ(), "\n"), false)
	}
	return text("unknown tool "+name, true)
}

// fill writes files into $HOME/fill and says how many and how much went in, and what stopped it.
func fill(a map[string]string) any {
	var files, size int
	fmt.Sscan(a["files"], &files)
	fmt.Sscan(a["bytes"], &size)
	dir := filepath.Join(os.Getenv("HOME"), "fill")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return text(err.Error(), true)
	}
	buf := make([]byte, size)
	var n, total int
	var werr error
	for n < files {
		f, err := os.Create(filepath.Join(dir, fmt.Sprint(n)))
		if err != nil {
			werr = err
			break
		}
		w, err := f.Write(buf)
		total += w
		f.Close()
		if err != nil {
			werr = err
			break
		}
		n++
	}
	return text(fmt.Sprintf("files=%d bytes=%d err=%v", n, total, werr), werr != nil)
}
