package generate

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain gives the package its own HOME, XDG dirs and a PATH without client CLIs: client
// detection, init's writes and its start check must not see the developer's own. With
// testServerEnv set the test binary is instead a tiny MCP server for StartCheck's proof call.
func TestMain(m *testing.M) {
	if os.Getenv(testServerEnv) != "" {
		testServer()
		return
	}
	testenv.Main(m, "generate")
}

const testServerEnv = "GENERATE_TEST_SERVER"

// testServer offers one tool, probe, which fails as serve does when the sandbox cannot run
// ({"fail": true}), and otherwise answers with the exit status and stderr it is given.
func testServer() {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	type ran struct {
		ExitCode int    `json:"exit_code"`
		Stderr   string `json:"stderr"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "probe"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Fail   bool   `json:"fail,omitempty"`
		Exit   int    `json:"exit,omitempty"`
		Stderr string `json:"stderr,omitempty"`
		Origin bool   `json:"origin,omitempty"` // fail unless started with init's origin mark
	}) (*mcp.CallToolResult, ran, error) {
		if in.Origin && os.Getenv(OriginEnv) != OriginInitCheck {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "started without the origin mark: " + os.Getenv(OriginEnv)}}}, ran{}, nil
		}
		if in.Fail {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the workspace is gone"}}}, ran{}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, ran{ExitCode: in.Exit, Stderr: in.Stderr}, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		os.Exit(1)
	}
}

// The hermetic PATH takes out every binary client detection looks for: a client added to the
// catalogue with a new binary must be added to testenv.ClientCLIs, or the suite would detect it
// on a developer's machine.
func TestHermeticPathCoversDetection(t *testing.T) {
	for _, c := range Clients() {
		for _, d := range c.Detect {
			if bin, ok := strings.CutPrefix(d, "bin:"); ok && !slices.Contains(testenv.ClientCLIs, bin) {
				t.Errorf("client %s is detected by the binary %q, which testenv.ClientCLIs does not take off the test PATH", c.ID, bin)
			}
		}
	}
	if got := Detect(mustHostEnv(t)); len(got) != 0 {
		t.Errorf("clients detected inside the test environment: %v (HOME %s)", got, mustHostEnv(t).Home)
	}
}

func mustHostEnv(t *testing.T) Env {
	t.Helper()
	e, err := HostEnv(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return e
}
