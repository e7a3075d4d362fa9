// Package serve runs a policy as an MCP server: it registers the scheme's tools, enforces the
// limits every scheme shares (timeout, output cap, concurrency), audits each call and renders
// results. The isolation itself lives in one executor.Executor per scheme (package executor).
package serve
