//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// surviveBrokenPipes keeps a long-running command (serve, wrap) alive when the reader of its
// stdout or stderr is gone: Go ends a program with SIGPIPE on a write to a broken fd 1 or 2
// unless it handles the signal, and serve's log line saying it is shutting down (its client, or
// the harness that started it, gone) killed it before it removed its containers and wrote its
// calls' outcomes. Handled, not ignored: an ignored signal would stay ignored in every command
// serve starts, a handled one is reset to its default at their exec. The writes then fail with
// EPIPE, which the MCP channel reads as its end.
func surviveBrokenPipes() {
	if mutated("serve-dies-on-broken-pipe") {
		return
	}
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}
