package generate

import (
	"bytes"
	"strings"
	"testing"
)

// The clients of a server already running (init --http without --scheme, or the wizard's second
// choice) were told to set the token "where serve starts: without it serve checks no token":
// that serve runs already, maybe on another machine, with its token (trial40 F10). Now the line
// says to give the clients the token it was started with. Catches init-http-running-token-wording.
func TestReportRunningServersToken(t *testing.T) {
	for _, wizard := range []bool{false, true} {
		pl := &Plan{only: true, wizard: wizard, ClientEntry: NewHTTPEntry("http://192.0.2.2:8765/mcp", "TOK")}
		var w bytes.Buffer
		pl.Report(&w, &Written{})
		want := "your clients read the token from $TOK: set it where they start (the configs hold only its name) to the token the server at http://192.0.2.2:8765/mcp was started with\n"
		if !strings.HasSuffix(w.String(), want) || strings.Contains(w.String(), "where serve starts") {
			t.Errorf("wizard %v: got\n%s\nwant the last line\n%s", wizard, w.String(), want)
		}
	}
}
