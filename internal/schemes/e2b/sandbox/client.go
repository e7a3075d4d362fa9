// Package sandbox is the e2b scheme's executor: a client for E2B's control plane, envd and code interpreter,
// and the executor that proxies run_code / run_command to E2B sandboxes with the policy E2B's
// own MCP server lacks (kill after use, errors surfaced, limits, audit).
package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Ports inside a sandbox.
const (
	envdPort        = 49983
	interpreterPort = 49999
)

// Bounds on what a (possibly hostile) upstream can make the client hold.
const (
	maxAPIBody  = 1 << 20 // a control-plane answer
	maxListBody = 8 << 20 // one page of the list
	maxFrame    = 4 << 20 // one Connect envelope
	// maxAnswerHead bounds an answer's head (status line and headers), the control plane's
	// and envd's: Go's default held 10 MiB of a hostile upstream's header lines per request.
	maxAnswerHead = 64 << 10
	// maxLine bounds one NDJSON event of /execute: a result carrying a picture of
	// executor.MaxImageBytes (base64) with its text fits.
	maxLine        = 12 << 20
	maxErrBody     = 4 << 10 // what an error body may contribute to a message
	maxListPages   = 50
	defaultReqTime = 30 * time.Second
	// MaxResults is how many results (display values) of one run_code call are kept; the
	// results' bytes count against the call's output limit (limits.max_output_bytes). What is
	// past either is dropped as it arrives and the call is marked truncated.
	MaxResults = 64
	// maxErrText bounds what an upstream string contributes to an error message.
	maxErrText = 300
)

// Config says where E2B is and how to authenticate.
type Config struct {
	APIKey string
	// KeyEnv is the name of the variable the key came from, for messages (never the key).
	KeyEnv string
	// APIURL is the control plane's base; default https://api.{Domain}.
	APIURL string
	// SandboxURL replaces https://{port}-{sandboxID}.{domain} for envd and the interpreter
	// (E2B_SANDBOX_URL); requests then carry E2b-Sandbox-Id / E2b-Sandbox-Port.
	SandboxURL string
	// Domain is E2B's domain; default e2b.app.
	Domain string
	// RequestTimeout bounds each control-plane request; default 30 s.
	RequestTimeout time.Duration
	// Retries on 429/502/503; default 3. Backoff starts at Backoff (200 ms).
	Retries int
	Backoff time.Duration
	// HTTP overrides the HTTP client (tests); its Timeout must stay 0 (streams are bounded by ctx).
	HTTP *http.Client
}

// Client talks to one E2B deployment.
type Client struct {
	cfg Config
	hc  *http.Client
}

// NewClient fills in defaults.
func NewClient(cfg Config) *Client {
	if cfg.Domain == "" {
		cfg.Domain = "e2b.app"
	}
	if cfg.APIURL == "" {
		cfg.APIURL = "https://api." + cfg.Domain
	}
	cfg.APIURL = strings.TrimRight(cfg.APIURL, "/")
	cfg.SandboxURL = strings.TrimRight(cfg.SandboxURL, "/")
	if cfg.KeyEnv == "" {
		cfg.KeyEnv = "E2B_API_KEY"
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = defaultReqTime
	}
	if cfg.Retries < 0 {
		cfg.Retries = 0
	} else if cfg.Retries == 0 {
		cfg.Retries = 3
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 200 * time.Millisecond
	}
	hc := cfg.HTTP
	if hc != nil {
		c := *hc
		hc = &c
	} else {
		hc = &http.Client{Transport: &http.Transport{
			Proxy:                  http.ProxyFromEnvironment,
			DialContext:            (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:    10 * time.Second,
			ResponseHeaderTimeout:  30 * time.Second,
			MaxResponseHeaderBytes: maxAnswerHead,
			IdleConnTimeout:        90 * time.Second,
			MaxIdleConnsPerHost:    64,
			ForceAttemptHTTP2:      true,
		}}
	}
	if !mutated("e2b-no-redirect-key") {
		// A redirect would carry X-API-Key (or a sandbox's access token) to wherever it points:
		// Go strips only Authorization and Cookie on a cross-host redirect. None is followed;
		// the 3xx answer itself is reported (see redirectErr).
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	if mutated("e2b-answer-head") {
		if t, ok := hc.Transport.(*http.Transport); ok {
			t.MaxResponseHeaderBytes = 0
		}
	}
	return &Client{cfg: cfg, hc: hc}
}

// APIURL is the control plane's base URL.
func (c *Client) APIURL() string { return c.cfg.APIURL }

// Sandbox is a created sandbox and what it takes to reach it.
type Sandbox struct {
	ID          string
	Domain      string
	token       string
	EnvdVersion string
	unleash     context.CancelFunc // stops a reuse = call sandbox's keepalive (executor)
	// The executor's, guarded by its mu: placed counts the sandbox under e2b.max_sessions (a
	// session's), used is when a call of it last began or ended (the least recently used idle
	// session's sandbox gives way first).
	placed bool
	used   time.Time
}

// Info is one sandbox of a list.
type Info struct {
	ID       string            `json:"sandboxID"`
	Template string            `json:"templateID"`
	Metadata map[string]string `json:"metadata"`
	State    string            `json:"state"`
	EndAt    time.Time         `json:"endAt"`
}

// ErrSandboxGone is a sandbox that expired or was killed.
var ErrSandboxGone = errors.New("the E2B sandbox is gone (it expired after e2b.sandbox_timeout or was killed)")

// ErrUnreachable is a control plane that did not answer: not reached, or not in time.
var ErrUnreachable = errors.New("the E2B API cannot be reached")

// unreachableError is one, with what was tried.
type unreachableError struct{ msg string }

func (e *unreachableError) Error() string        { return e.msg }
func (e *unreachableError) Is(target error) bool { return target == ErrUnreachable }

// ErrUnauthorized is a 401 from the control plane.
var ErrUnauthorized = errors.New("E2B rejected the API key")

// APIError is a control-plane answer other than success.
type APIError struct {
	Op      string
	Status  int
	Message string // sanitized, bounded
	keyEnv  string
	tries   int
}

func (e *APIError) Error() string {
	switch e.Status {
	case http.StatusUnauthorized:
		return fmt.Sprintf("E2B rejected the API key in $%s (401 Unauthorized on %s): set %s to a valid key from https://e2b.dev/dashboard?tab=keys", e.keyEnv, e.Op, e.keyEnv)
	case http.StatusForbidden:
		return fmt.Sprintf("E2B refused %s (403 Forbidden: %s): the key's team may lack access to the template or have hit its sandbox quota", e.Op, e.Message)
	case http.StatusTooManyRequests:
		return fmt.Sprintf("E2B refused %s: rate limit or concurrent-sandbox quota reached (429: %s), still after %d attempts; wait, kill unused sandboxes, or lower limits.max_concurrent", e.Op, e.Message, e.tries)
	case http.StatusNotFound:
		return fmt.Sprintf("E2B %s: not found (404: %s)", e.Op, e.Message)
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return fmt.Sprintf("E2B is unavailable for %s (%d: %s), still after %d attempts; try again later", e.Op, e.Status, e.Message, e.tries)
	}
	return fmt.Sprintf("E2B %s failed (%d: %s)", e.Op, e.Status, e.Message)
}

func (e *APIError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized
	}
	return false
}

// clean makes an upstream string safe for a message: printable, without the key, bounded —
// in that order: characters removed after redaction could join a key split by them, and a cut
// before redaction could leave the key's first half.
func (c *Client) clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || unicode.IsPrint(r) {
			return r
		}
		return -1
	}, strings.ToValidUTF8(s, ""))
	s = c.redactErrText(s)
	if t, cut := clip(s, maxErrText); cut {
		s = t + "…"
	}
	return strings.TrimSpace(s)
}

// redactErrText removes the key (and a cut-off start of it) from upstream text bound for an
// error message or the log.
func (c *Client) redactErrText(s string) string {
	if mutated("e2b-redact-errors") {
		return s
	}
	return redactKey(s, c.cfg.APIKey, true)
}

// redactOut removes the key from upstream text bound for a result (a result value, an
// exception). s is whole: it is redacted before any cap applies.
func (c *Client) redactOut(s string) string {
	if mutated("e2b-redact") {
		return s
	}
	return redactKey(s, c.cfg.APIKey, false)
}

// redirectErr reports a 3xx answer: never followed, since the request carries a credential.
func (c *Client) redirectErr(what string, resp *http.Response) error {
	return fmt.Errorf("%s: %s answered %d with a redirect to %q, which mcpsandbox does not follow (the request carries the E2B key or the sandbox's token, and would take it to another address): point e2b.api_url / E2B_API_URL (or E2B_SANDBOX_URL) at the final address if you trust it",
		what, c.clean(resp.Request.URL.Redacted()), resp.StatusCode, c.clean(resp.Header.Get("Location")))
}

func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusBadGateway || status == http.StatusServiceUnavailable
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Client) backoff(attempt int, retryAfter string) time.Duration {
	d := c.cfg.Backoff << attempt
	if s, err := strconv.Atoi(retryAfter); err == nil && s > 0 {
		d = time.Duration(s) * time.Second
	}
	if d > 5*time.Second {
		d = 5 * time.Second
	}
	return d/2 + rand.N(d/2+1)
}

// api does one control-plane request with retries; out (if not nil) receives the JSON answer.
func (c *Client) api(ctx context.Context, op, method, path string, body, out any, limit int64) (http.Header, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	budget := ""
	if dl, ok := ctx.Deadline(); ok {
		budget = " within " + time.Until(dl).Round(100*time.Millisecond).String()
	}
	for attempt := 0; ; attempt++ {
		h, status, msg, err := c.apiOnce(ctx, method, path, payload, out, limit)
		last := attempt >= c.cfg.Retries
		if err != nil {
			if ctx.Err() != nil {
				return nil, &SlowAPIError{Op: op, URL: c.cfg.APIURL, Budget: budget, err: ctx.Err()}
			}
			return nil, err // unreachable, refused, malformed: retrying would only delay the error
		}
		if status/100 == 2 {
			return h, nil
		}
		if retryable(status) && !last {
			if sleep(ctx, c.backoff(attempt, h.Get("Retry-After"))) == nil {
				continue
			}
			return nil, &SlowAPIError{Op: op, URL: c.cfg.APIURL, Budget: budget, err: ctx.Err(), last: fmt.Sprintf("%d: %s", status, msg)}
		}
		return nil, &APIError{Op: op, Status: status, Message: msg, keyEnv: c.cfg.KeyEnv, tries: attempt + 1}
	}
}

func (c *Client) apiOnce(ctx context.Context, method, path string, payload []byte, out any, limit int64) (http.Header, int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.cfg.APIURL+path, rd)
	if err != nil {
		return nil, 0, "", fmt.Errorf("e2b.api_url %q is not a usable URL: %w", c.cfg.APIURL, err)
	}
	req.Header.Set("X-API-Key", c.cfg.APIKey)
	req.Header.Set("User-Agent", "mcpsandbox")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, 0, "", c.unreachable(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 3 {
		return nil, 0, "", c.redirectErr("the E2B API", resp)
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrBody))
		var e struct {
			Message string `json:"message"`
		}
		msg := string(b)
		if json.Unmarshal(b, &e) == nil && e.Message != "" {
			msg = e.Message
		}
		return resp.Header, resp.StatusCode, c.clean(msg), nil
	}
	if out == nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrBody))
		return resp.Header, resp.StatusCode, "", nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, "", fmt.Errorf("E2B API at %s did not finish its answer within %s", c.cfg.APIURL, c.cfg.RequestTimeout)
		}
		return nil, 0, "", fmt.Errorf("reading E2B's answer: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, 0, "", fmt.Errorf("E2B's answer to %s %s exceeds %d bytes: refusing it (is e2b.api_url an E2B API?)", method, path, limit)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, 0, "", fmt.Errorf("E2B's answer to %s %s is not the expected JSON (%v): is e2b.api_url (%s) an E2B API?", method, path, err, c.cfg.APIURL)
	}
	return resp.Header, resp.StatusCode, "", nil
}

// SlowAPIError is a control-plane request the call's deadline (or its cancel) ended: it says
// what was slow and how long it had.
type SlowAPIError struct {
	Op, URL, Budget string
	last            string
	err             error
}

func (e *SlowAPIError) Error() string {
	s := fmt.Sprintf("E2B's API at %s did not answer %s%s (the call's limits.timeout)", e.URL, opGerund(e.Op), e.Budget)
	if e.last != "" {
		s += "; its last answer was " + e.last
	}
	return s + ": E2B may be slow or unreachable; try again, or raise limits.timeout"
}

func (e *SlowAPIError) Unwrap() error { return e.err }

// Is: a control plane slower than the call's deadline did not answer.
func (e *SlowAPIError) Is(target error) bool { return target == ErrUnreachable }

// opGerund turns "create sandbox" into "creating the sandbox".
func opGerund(op string) string {
	switch op {
	case "create sandbox":
		return "creating the sandbox"
	case "kill sandbox":
		return "killing the sandbox"
	case "set sandbox timeout":
		return "extending the sandbox's lifetime"
	case "list sandboxes":
		return "listing the sandboxes"
	}
	return "to " + op
}

func (c *Client) unreachable(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &unreachableError{fmt.Sprintf("the E2B API at %s did not answer in time: check the network, or e2b.api_url / E2B_API_URL", c.cfg.APIURL)}
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &unreachableError{fmt.Sprintf("cannot reach the E2B API at %s (%v): check the network, or e2b.api_url / E2B_API_URL", c.cfg.APIURL, c.clean(err.Error()))}
}

// CreateOptions are what a sandbox is created with.
type CreateOptions struct {
	Template      string
	Timeout       time.Duration // the sandbox's lifetime; E2B kills it after
	Metadata      map[string]string
	AllowInternet bool
}

// Create starts a sandbox. No environment variables are sent: nothing of serve's environment
// (the API key least of all) enters the sandbox.
func (c *Client) Create(ctx context.Context, o CreateOptions) (*Sandbox, error) {
	secs := int(o.Timeout.Round(time.Second) / time.Second)
	if secs < 1 {
		secs = 1
	}
	body := map[string]any{"templateID": o.Template, "timeout": secs, "secure": true,
		"allow_internet_access": o.AllowInternet, "metadata": o.Metadata}
	var out struct {
		SandboxID       string  `json:"sandboxID"`
		EnvdVersion     string  `json:"envdVersion"`
		EnvdAccessToken string  `json:"envdAccessToken"`
		Domain          *string `json:"domain"`
	}
	if _, err := c.api(ctx, "create sandbox", http.MethodPost, "/sandboxes", body, &out, maxAPIBody); err != nil {
		return nil, err
	}
	if !sandboxIDOK(out.SandboxID) {
		return nil, fmt.Errorf("E2B's create answer has no usable sandboxID (%q, %d bytes: want 1 to %d letters, digits, '.', '_' or '-'); is e2b.api_url (or E2B_API_URL) E2B's API?",
			c.clean(out.SandboxID), len(out.SandboxID), maxSandboxID)
	}
	sb := &Sandbox{ID: out.SandboxID, token: out.EnvdAccessToken, EnvdVersion: out.EnvdVersion, Domain: c.cfg.Domain}
	if out.Domain != nil && *out.Domain != "" {
		sb.Domain = *out.Domain
		// The domain is part of the sandbox's address (https://PORT-ID.DOMAIN), as the id is:
		// "x@127.0.0.1:9" would send the sandbox's requests, its token and the program, to a
		// host and port of the answer's choosing. Only a host name is taken; the sandbox the
		// answer named is killed (nobody could reach it).
		if err := policy.CheckHostName(sb.Domain); err != nil && !mutated("atk19b-e2b-answer-domain") {
			kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killTimeout)
			defer cancel()
			c.Kill(kctx, sb.ID)
			return nil, fmt.Errorf("E2B's create answer gives the sandbox the domain %q, which is not a host name (%s): refusing to send the sandbox's requests there; is e2b.api_url (or E2B_API_URL) E2B's API?",
				c.clean(sb.Domain), c.clean(err.Error()))
		}
	}
	return sb, nil
}

// maxSandboxID bounds a sandbox id (E2B's are about 20 characters).
const maxSandboxID = 128

// sandboxIDOK says whether a create answer's sandbox id can be used: it becomes part of URLs
// and headers, and a line of the undertaker's pipe (lines of at most 64 KiB there: a longer one,
// or a newline, ended the undertaker's reading as if serve had died, and it killed every
// sandbox serve held).
func sandboxIDOK(id string) bool {
	if mutated("atk19b-e2b-id-shape") {
		return id != "" && !strings.ContainsAny(id, "/?#@: ")
	}
	if id == "" || len(id) > maxSandboxID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Kill kills a sandbox; one already gone is not an error.
func (c *Client) Kill(ctx context.Context, id string) error {
	_, err := c.api(ctx, "kill sandbox", http.MethodDelete, "/sandboxes/"+url.PathEscape(id), nil, nil, 0)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return nil
	}
	return err
}

// SetTimeout resets a sandbox's remaining lifetime.
func (c *Client) SetTimeout(ctx context.Context, id string, d time.Duration) error {
	_, err := c.api(ctx, "set sandbox timeout", http.MethodPost, "/sandboxes/"+url.PathEscape(id)+"/timeout",
		map[string]int{"timeout": int(d / time.Second)}, nil, 0)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return ErrSandboxGone
	}
	return err
}

// List calls each for every running sandbox whose metadata has every given pair, a page at a
// time: it holds one page (at most maxListBody), never the whole list, whose size is the API's
// to choose (up to maxListPages pages: 50 of 8 MiB held at once took 640 MiB of heap).
func (c *Client) List(ctx context.Context, metadata map[string]string, each func(Info)) error {
	q := url.Values{}
	if len(metadata) > 0 {
		m := url.Values{}
		for k, v := range metadata {
			m.Set(k, v)
		}
		q.Set("metadata", m.Encode())
	}
	q.Set("state", "running")
	q.Set("limit", "100")
	var held [][]Info
	for page := 0; page < maxListPages; page++ {
		var out []Info
		h, err := c.api(ctx, "list sandboxes", http.MethodGet, "/v2/sandboxes?"+q.Encode(), nil, &out, maxListBody)
		if err != nil {
			return err
		}
		if mutated("atk19b-e2b-list-held") {
			held = append(held, out)
		}
		for _, s := range out {
			each(s)
		}
		next := h.Get("X-Next-Token")
		if next == "" || len(out) == 0 {
			break
		}
		q.Set("nextToken", next)
	}
	runtime.KeepAlive(held)
	return nil
}

// base is where a sandbox port is reached.
func (c *Client) base(sb *Sandbox, port int) string {
	if c.cfg.SandboxURL != "" {
		return c.cfg.SandboxURL
	}
	return fmt.Sprintf("https://%d-%s.%s", port, sb.ID, sb.Domain)
}

func (c *Client) sandboxRequest(ctx context.Context, sb *Sandbox, port int, path, contentType string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base(sb, port)+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("E2B_SANDBOX_URL / sandbox address is not a usable URL: %w", err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("E2b-Sandbox-Id", sb.ID)
	req.Header.Set("E2b-Sandbox-Port", strconv.Itoa(port))
	req.Header.Set("User-Agent", "mcpsandbox")
	if sb.token != "" {
		req.Header.Set("X-Access-Token", sb.token)
	}
	return req, nil
}

// sandboxStatus turns a failed answer from inside a sandbox into an error.
func (c *Client) sandboxStatus(what string, resp *http.Response) error {
	if resp.StatusCode/100 == 3 {
		return c.redirectErr(what, resp)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrBody))
	msg := c.clean(string(b))
	switch resp.StatusCode {
	case http.StatusBadGateway:
		return fmt.Errorf("%s: %w (502: %s)", what, ErrSandboxGone, msg)
	case http.StatusUnauthorized:
		return fmt.Errorf("%s: the sandbox refused its access token (401: %s)", what, msg)
	}
	return fmt.Errorf("%s: E2B answered %d: %s", what, resp.StatusCode, msg)
}

// CommandResult is how a command ended.
type CommandResult struct {
	PID      int
	ExitCode int
	TimedOut bool
}

// RunCommand runs command with bash -l -c in the sandbox through envd's process.Process/Start,
// streaming stdout and stderr into the writers (which cap them). ctx's deadline is sent as
// Connect-Timeout-Ms, so envd kills the command too; when it passes the result says TimedOut.
func (c *Client) RunCommand(ctx context.Context, sb *Sandbox, command string, stdout, stderr io.Writer) (*CommandResult, error) {
	// The key is taken out of the streams before the writers cap them.
	ro, re := newRedactWriter(stdout, c.cfg.APIKey), newRedactWriter(stderr, c.cfg.APIKey)
	defer ro.Flush()
	defer re.Flush()
	req, err := c.commandRequest(ctx, sb, command)
	if err != nil {
		return nil, err
	}
	res := &CommandResult{PID: -1}
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.streamErr(ctx, res, "start the command", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, c.sandboxStatus("start the command", resp)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/connect+json") {
		return nil, fmt.Errorf("envd answered Process/Start with Content-Type %q, not a Connect stream", c.clean(ct))
	}
	return c.readCommandStream(ctx, resp.Body, res, ro, re)
}

// trailerGrace is how long, after the command's end event, the stream's end-of-stream frame (or
// the body's end) may take: envd sends it at once; an envd or proxy that keeps the answer open
// must not hold a finished command's result until the call's timeout, reported as a timeout.
const trailerGrace = 2 * time.Second

// commandRequest is the Connect request of process.Process/Start that runs command with bash -l -c
// in /home/user, ctx's deadline sent as Connect-Timeout-Ms.
func (c *Client) commandRequest(ctx context.Context, sb *Sandbox, command string) (*http.Request, error) {
	msg, _ := json.Marshal(map[string]any{
		"process": map[string]any{"cmd": "/bin/bash", "args": []string{"-l", "-c", command}, "envs": map[string]string{}, "cwd": "/home/user"},
		"stdin":   false,
	})
	frame := make([]byte, 5+len(msg))
	binary.BigEndian.PutUint32(frame[1:5], uint32(len(msg)))
	copy(frame[5:], msg)
	req, err := c.sandboxRequest(ctx, sb, envdPort, "/process.Process/Start", "application/connect+json", frame)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Connect-Protocol-Version", "1")
	req.Header.Set("Keepalive-Ping-Interval", "50")
	if dl, ok := ctx.Deadline(); ok {
		ms := time.Until(dl).Milliseconds()
		if ms < 1 {
			ms = 1
		}
		req.Header.Set("Connect-Timeout-Ms", strconv.FormatInt(ms, 10))
	}
	return req, nil
}

// readCommandStream reads Process/Start's Connect frames from body into res and the writers
// until the end-of-stream frame (or EOF after the command's end event).
func (c *Client) readCommandStream(ctx context.Context, body io.ReadCloser, res *CommandResult, stdout, stderr io.Writer) (*CommandResult, error) {
	br := bufio.NewReaderSize(body, 64<<10)
	var hdr [5]byte
	buf := make([]byte, 0, 64<<10)
	ended := false
	var graceOver atomic.Bool
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			if ended && (errors.Is(err, io.EOF) || graceOver.Load()) {
				return res, nil // no trailer after end: accept
			}
			return c.streamErr(ctx, res, "read the command's output", err)
		}
		n := binary.BigEndian.Uint32(hdr[1:])
		if n > maxFrame {
			return nil, fmt.Errorf("envd sent a %d-byte frame (limit %d): refusing a malformed or hostile stream", n, maxFrame)
		}
		if hdr[0]&1 != 0 {
			return nil, errors.New("envd sent a compressed frame, which was not negotiated")
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(br, buf); err != nil {
			return c.streamErr(ctx, res, "read the command's output", err)
		}
		if hdr[0]&2 != 0 {
			return c.commandTrailer(ctx, buf, res, ended)
		}
		end, err := processEvent(buf, res, stdout, stderr)
		if err != nil {
			return nil, err
		}
		if end && !ended && !mutated("atk19b-e2b-trailer-grace") {
			t := time.AfterFunc(trailerGrace, func() { graceOver.Store(true); body.Close() })
			defer t.Stop()
		}
		ended = ended || end
	}
}

// commandTrailer is how the command ended, from the stream's end-of-stream frame (ended: the
// command's end event came before it).
func (c *Client) commandTrailer(ctx context.Context, buf []byte, res *CommandResult, ended bool) (*CommandResult, error) {
	var tr struct {
		Error *struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(buf, &tr); err != nil {
		return nil, fmt.Errorf("envd's end-of-stream is not JSON: %v", err)
	}
	if tr.Error == nil {
		if !ended {
			return nil, errors.New("envd ended the stream without the command's end event")
		}
		return res, nil
	}
	switch tr.Error.Code {
	case "deadline_exceeded":
		res.TimedOut = true
		if !ended {
			res.ExitCode = -1
		}
		return res, nil
	case "unavailable":
		return nil, fmt.Errorf("run the command: %w (%s)", ErrSandboxGone, c.clean(tr.Error.Message))
	case "canceled":
		if ctx.Err() != nil {
			return c.streamErr(ctx, res, "run the command", ctx.Err())
		}
	}
	return nil, fmt.Errorf("envd: %s: %s", c.clean(tr.Error.Code), c.clean(tr.Error.Message))
}

// processEvent applies one process event frame to res and the writers; end says it was the
// command's end event.
func processEvent(buf []byte, res *CommandResult, stdout, stderr io.Writer) (end bool, err error) {
	var m struct {
		Event struct {
			Start *struct {
				PID int `json:"pid"`
			} `json:"start"`
			Data *struct {
				Stdout []byte `json:"stdout"`
				Stderr []byte `json:"stderr"`
			} `json:"data"`
			End *struct {
				ExitCode int    `json:"exitCode"`
				Exited   bool   `json:"exited"`
				Status   string `json:"status"`
			} `json:"end"`
		} `json:"event"`
	}
	if err := json.Unmarshal(buf, &m); err != nil {
		return false, fmt.Errorf("envd sent a frame that is not a process event: %v", err)
	}
	switch e := m.Event; {
	case e.Start != nil:
		res.PID = e.Start.PID
	case e.Data != nil:
		stdout.Write(e.Data.Stdout)
		stderr.Write(e.Data.Stderr)
	case e.End != nil:
		res.ExitCode = e.End.ExitCode
		return true, nil
	}
	return false, nil
}

// streamErr classifies a failure while a sandbox stream was open.
func (c *Client) streamErr(ctx context.Context, res *CommandResult, what string, err error) (*CommandResult, error) {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		res.TimedOut = true
		res.ExitCode = -1
		return res, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var ue *url.Error
	if errors.As(err, &ue) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("%s: cannot reach the sandbox at %s (%s)", what, c.clean(ue.URL), c.clean(ue.Err.Error()))
	}
	return nil, fmt.Errorf("%s: the stream broke off (%s): the sandbox may have been killed", what, c.clean(err.Error()))
}

// ExecError is an exception the code raised.
type ExecError struct {
	Name, Value, Traceback string
}

func (e *ExecError) Error() string { return e.Name + ": " + e.Value }

// Execution is what code produced besides its streams.
type Execution struct {
	Results []string // text of each result, the main result (the last expression) included
	// Images are the results' pictures (png, jpeg, svg), within executor.BoundImages: the
	// ones past its bounds are described, not held.
	Images   []executor.Image
	Error    *ExecError
	TimedOut bool
	// Truncated: results past MaxResults or the byte limit were dropped, or the exception
	// was cut to the byte limit.
	Truncated bool
}

// RunCode runs code through the code interpreter's /execute, streaming stdout and stderr into
// the writers. A raised exception is Execution.Error, not an error: the call itself worked.
// limit bounds the results' total bytes, and separately the exception's (name, value and
// traceback together); 0 means maxLine. Results past it or past MaxResults are dropped as they
// arrive, never held. Every upstream string is redacted before it is cut.
func (c *Client) RunCode(ctx context.Context, sb *Sandbox, code, language string, stdout, stderr io.Writer, limit int) (*Execution, error) {
	if limit <= 0 {
		limit = maxLine
	}
	ro, re := newRedactWriter(stdout, c.cfg.APIKey), newRedactWriter(stderr, c.cfg.APIKey)
	defer ro.Flush()
	defer re.Flush()
	stdout, stderr = ro, re
	resultBytes := 0
	body := map[string]any{"code": code}
	if language != "" {
		body["language"] = language
	}
	payload, _ := json.Marshal(body)
	req, err := c.sandboxRequest(ctx, sb, interpreterPort, "/execute", "application/json", payload)
	if err != nil {
		return nil, err
	}
	ex := &Execution{}
	timedOut := func(err error) (*Execution, error) {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			ex.TimedOut = true
			return ex, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return timedOut(fmt.Errorf("run the code: cannot reach the sandbox's interpreter (%s)", c.clean(err.Error())))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, c.sandboxStatus("run the code", resp)
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		line, err := readLine(br, maxLine)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return timedOut(errors.New("run the code: the interpreter's stream ended before end_of_execution: the sandbox may have been killed"))
			}
			if errors.Is(err, errLineTooLong) {
				return nil, fmt.Errorf("run the code: the interpreter sent an event over %d bytes: refusing a malformed or hostile stream", maxLine)
			}
			return timedOut(fmt.Errorf("run the code: the stream broke off (%s)", c.clean(err.Error())))
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var ev execEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, fmt.Errorf("run the code: the interpreter sent a line that is not JSON (%v): refusing a malformed stream", err)
		}
		end, err := c.addEvent(ex, &ev, &resultBytes, limit, stdout, stderr)
		if err != nil {
			return nil, err
		}
		if end {
			ex.Images = executor.BoundImages(ex.Images)
			return ex, nil
		}
	}
}

// execEvent is one line of the interpreter's /execute stream.
type execEvent struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Name      string `json:"name"`
	Value     string `json:"value"`
	Traceback string `json:"traceback"`
	// A display's pictures: png and jpeg in base64, svg as text (Jupyter's image/svg+xml).
	PNG  string `json:"png"`
	JPEG string `json:"jpeg"`
	SVG  string `json:"svg"`
}

// addEvent takes one event into ex, redacting before it caps: results and the exception are
// held within limit bytes (results also within MaxResults) as they arrive. It reports the end
// of the execution.
func (c *Client) addEvent(ex *Execution, ev *execEvent, resultBytes *int, limit int, stdout, stderr io.Writer) (end bool, err error) {
	switch ev.Type {
	case "stdout":
		io.WriteString(stdout, ev.Text)
	case "stderr":
		io.WriteString(stderr, ev.Text)
	case "result":
		if err := c.addPictures(ex, ev); err != nil {
			return false, err
		}
		if ev.Text == "" {
			return false, nil
		}
		t := c.redactOut(ev.Text)
		if !mutated("e2b-results-cap") {
			if len(ex.Results) >= MaxResults || *resultBytes >= limit {
				ex.Truncated = true
				return false, nil
			}
			var cut bool
			if t, cut = clip(t, limit-*resultBytes); cut {
				ex.Truncated = true
			}
		}
		*resultBytes += len(t)
		ex.Results = append(ex.Results, t)
	case "error":
		e := &ExecError{Name: c.redactOut(ev.Name), Value: c.redactOut(ev.Value), Traceback: c.redactOut(ev.Traceback)}
		if !mutated("e2b-exception-cap") {
			room := limit
			for _, f := range []*string{&e.Name, &e.Value, &e.Traceback} {
				var cut bool
				if *f, cut = clip(*f, room); cut {
					ex.Truncated = true
				}
				room -= len(*f)
			}
		}
		ex.Error = e
	case "end_of_execution":
		return true, nil
	}
	return false, nil
}

var errLineTooLong = errors.New("line too long")

// readLine reads one \n-terminated line of at most limit bytes.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > limit {
			return nil, errLineTooLong
		}
		line = append(line, frag...)
		if err == nil {
			return line, nil
		}
		if err != bufio.ErrBufferFull {
			if err == io.EOF && len(line) > 0 {
				return line, nil
			}
			return nil, err
		}
	}
}
