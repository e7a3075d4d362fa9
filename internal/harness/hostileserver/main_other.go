//go:build !linux

// Command hostileserver is a malicious stdio MCP server for the harness's tests; it runs on
// Linux only (the schemes it attacks confine Linux processes).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "hostileserver: Linux only")
	os.Exit(2)
}
