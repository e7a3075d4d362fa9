package generate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CheckHTTPURL checks the URL clients will reach `serve --http` at, and gives it serve's path
// (/mcp) when it has none.
func CheckHTTPURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil:
		return "", fmt.Errorf("--http %q: %w (give the URL serve --http prints, e.g. http://127.0.0.1:8765/mcp)", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("--http %q: the URL must start with http:// or https:// (e.g. http://127.0.0.1:8765/mcp)", raw)
	case u.Host == "" || u.Hostname() == "":
		return "", fmt.Errorf("--http %q names no host (e.g. http://127.0.0.1:8765/mcp)", raw)
	case u.User != nil:
		return "", fmt.Errorf("--http %q holds a user or password: give the token's variable with --token-env instead, so no secret is written", raw)
	}
	if u.Path == "" || u.Path == "/" || u.Path == "/mcp/" { // serve answers at /mcp alone (trial33 F13)
		u.Path = "/mcp"
	}
	return u.String(), nil
}

var envName = lazy.Regexp(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CheckHTTPEntry refuses a token variable that is not a variable's name, and a server beyond
// this machine without one (serve refuses to listen there without a token, so every request
// needs it).
func CheckHTTPEntry(e ServerEntry) error {
	if e.TokenEnv != "" && !envName().MatchString(e.TokenEnv) {
		return fmt.Errorf("--token-env %q is not an environment variable's name: give the NAME of the variable that holds the token (e.g. MCPSANDBOX_TOKEN), never the token", e.TokenEnv)
	}
	u, err := url.Parse(e.URL)
	if err != nil {
		return err
	}
	if e.TokenEnv == "" && !loopbackHost(u.Hostname()) {
		return fmt.Errorf("--http %s is beyond this machine, where serve always requires a bearer token: add --token-env NAME, the variable your clients read the token from", e.URL)
	}
	return nil
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

// ErrNotRunning: nothing listens at an HTTP entry's address (yet).
var ErrNotRunning = errors.New("nothing answers there")

// TokenUnsetError: the token's variable is not set in init's environment, so the running server
// cannot be checked; trying again in the same process cannot help (the wizard offers another
// variable instead).
type TokenUnsetError struct{ Var, URL string }

func (e *TokenUnsetError) Error() string {
	return fmt.Sprintf("$%s is not set here, so init cannot check the server at %s with it: set it to the token serve was started with (and in the environment your clients start from)", e.Var, e.URL)
}

// HTTPCheck connects to the entry's URL as a client would, with the bearer token read from the
// variable the entry names (env is the environment to read it from), and completes initialize
// and tools/list. Nothing listening is ErrNotRunning; a refused token says so.
func HTTPCheck(ctx context.Context, e ServerEntry, env []string, timeout time.Duration) (Probe, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u, err := url.Parse(e.URL)
	if err != nil {
		return Probe{}, err
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	start := time.Now()
	c, err := (&net.Dialer{Timeout: 3 * time.Second}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return Probe{}, fmt.Errorf("%w (%s: %v)", ErrNotRunning, addr, err)
	}
	c.Close()
	token := ""
	if e.TokenEnv != "" {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, e.TokenEnv+"="); ok {
				token = v
			}
		}
		if token == "" {
			return Probe{}, &TokenUnsetError{Var: e.TokenEnv, URL: e.URL}
		}
	}
	var status int
	hc := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
			status = resp.StatusCode
		}
		return resp, err
	})}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpsandbox-init", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.URL, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		switch {
		case status == http.StatusUnauthorized && token == "":
			return Probe{}, fmt.Errorf("the server at %s wants a bearer token (401): add --token-env NAME, the variable holding the token serve was started with", e.URL)
		case status == http.StatusUnauthorized:
			return Probe{}, fmt.Errorf("the server at %s refused the token in $%s (401): it is not the token serve was started with, and your clients would be refused too", e.URL, e.TokenEnv)
		case status == http.StatusForbidden:
			return Probe{}, fmt.Errorf("the server at %s refused the request (403): check its --allow-origin and the host name in the URL", e.URL)
		}
		return Probe{}, fmt.Errorf("the server at %s does not answer MCP: %w", e.URL, err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return Probe{}, fmt.Errorf("the server at %s: tools/list: %w", e.URL, err)
	}
	p := Probe{Elapsed: time.Since(start)}
	for _, t := range res.Tools {
		p.Tools = append(p.Tools, t.Name)
	}
	return p, nil
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
