package sandbox

import "time"

// startPatience is how long the relay waits for the server's first word after the client's
// initialize before saying why it may be slow. A server that npx or uvx fetches on its first
// start says nothing while the package downloads, and a client gives up on its own clock (the
// MCP Inspector after 15 s) with no word of the cause.
const startPatience = 8 * time.Second

// slowStart logs, once, that the server has not answered the client's initialize yet.
func (r *relay) slowStart(patience time.Duration) {
	select {
	case <-r.heard:
	case <-time.After(patience):
		select {
		case <-r.heard: // both were ready when this goroutine ran: the server did answer
			return
		default:
		}
		if mutated("wrap-slow-start-note") {
			return
		}
		r.log.Warn("the wrapped server has not answered the client's initialize yet; a first start through npx or uvx downloads the package first (later starts are quick): if the client gave up waiting, start it again, or run the server's command once by hand to fill the cache",
			"waited", patience.String())
	}
}
