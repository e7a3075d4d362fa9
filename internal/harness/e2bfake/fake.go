// Package e2bfake is a local server speaking E2B's protocol: the REST control plane, envd's
// process.Process/Start over Connect streaming, and the code interpreter's NDJSON /execute. It
// runs programs as child processes in a per-sandbox temporary directory (as an unprivileged user
// when it runs as root) and kills every process of a sandbox when the sandbox is killed or
// expires. It is what the e2b scheme is tested against offline, and its fidelity is checked by
// the official E2B JS SDKs (sdktest/). It isolates nothing: never point untrusted code at it.
//
// Routing follows the SDKs: with E2B_API_URL and E2B_SANDBOX_URL both set to this server, control
// plane requests come without sandbox headers, while envd and /execute requests carry
// E2b-Sandbox-Id and E2b-Sandbox-Port (or arrive on a host named {port}-{sandboxID}.{domain}).
package e2bfake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Ports the SDKs address inside a sandbox.
const (
	EnvdPort        = 49983
	InterpreterPort = 49999
	// EnvdVersion is what create reports; the SDKs switch features on it (>= 0.4.0: no default user).
	EnvdVersion = "0.5.7"
	// DefaultTimeout is the API's sandbox lifetime when create omits one.
	DefaultTimeout = 15 * time.Second
	// MaxTimeout is the longest lifetime the fake grants (E2B's Base tier).
	MaxTimeout = time.Hour
)

// Options configure New.
type Options struct {
	// APIKey is the only key the control plane accepts (X-API-Key). Required.
	APIKey string
	// Domain is reported to clients and accepted in {port}-{id}.{domain} hosts. Default "e2b.local".
	Domain string
	// Python is the interpreter /execute runs; default /usr/bin/python3, else python3 on PATH.
	Python string
	// Echo makes Process/Start run nothing: every command "prints" its own text and exits 0.
	// For benchmarks, to measure a client's cost without process start-up noise.
	Echo bool
	// UID/GID the programs run as when the fake runs as root; default 65534 (nobody).
	UID, GID int
	// MaxSandboxes, if > 0, is the team's limit on sandboxes running at once: a create past it
	// is answered 429 with E2B's message, as E2B does (Hobby 20, Pro 100).
	MaxSandboxes int
}

// Fault makes the server misbehave, for tests of the client's defences.
type Fault struct {
	Scope   string        // "api", "envd", "execute", or "" for every request
	Status  int           // answer with this HTTP status (e.g. 401, 429, 502, 503)
	Hang    bool          // accept the request and never answer
	Delay   time.Duration // answer this much later
	Huge    bool          // an endless body (api: JSON that never ends; envd: endless output; execute: endless line)
	Garbage bool          // malformed frames / bodies
	EchoKey bool          // with Status 401: echo the presented key back in the error body (a hostile upstream)
	// Handler answers the request instead of the fake (a hostile upstream scripted by a test:
	// redirects, giant result streams, echoed secrets).
	Handler http.HandlerFunc
	Times   int // how many matching requests to affect; 0 = until cleared
	hits    int
}

// Server is a running fake.
type Server struct {
	opts Options
	root string
	ln   net.Listener
	http *http.Server
	done chan struct{}

	mu        sync.Mutex
	sandboxes map[string]*sandbox
	fault     *Fault
	created   int
	killed    int
	expired   int
	lastEnv   map[string]string
	requests  map[string]int
	faultHits int
	refused   int // creates answered 429 past MaxSandboxes
	peak      int // the most sandboxes live at once
	wg        sync.WaitGroup
}

type sandbox struct {
	id, template, token string
	metadata            map[string]string
	envVars             map[string]string
	allowInternet       *bool
	dir                 string
	started, end        time.Time
	timer               *time.Timer
	procs               map[int]*proc
	dead                bool
	executions          int
}

// New starts a fake on 127.0.0.1 (a free port).
func New(o Options) (*Server, error) {
	if o.APIKey == "" {
		return nil, errors.New("e2bfake: Options.APIKey is required")
	}
	if o.Domain == "" {
		o.Domain = "e2b.local"
	}
	if o.UID == 0 {
		o.UID = 65534
	}
	if o.GID == 0 {
		o.GID = 65534
	}
	if o.Python == "" {
		o.Python = findPython()
	}
	sweepOrphans()
	root, err := os.MkdirTemp("", "e2bfake-")
	if err != nil {
		return nil, fmt.Errorf("e2bfake: temporary root: %w", err)
	}
	if err := os.Chmod(root, 0o711); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(root, "owner"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	// E2B's templates have python3 on PATH; a host with only python3.X-minimal has no such
	// link, so the sandboxes get one in a bin directory of their own, first on PATH.
	if err := os.Mkdir(filepath.Join(root, "bin"), 0o755); err != nil {
		return nil, err
	}
	if p, err := exec.LookPath(o.Python); err == nil {
		os.Symlink(p, filepath.Join(root, "bin", "python3"))
		os.Symlink(p, filepath.Join(root, "bin", "python"))
	}
	if err := os.WriteFile(filepath.Join(root, "runner.py"), []byte(runnerPy), 0o644); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(root)
		return nil, fmt.Errorf("e2bfake: listen: %w", err)
	}
	s := &Server{opts: o, root: root, ln: ln, done: make(chan struct{}),
		sandboxes: map[string]*sandbox{}, requests: map[string]int{}}
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.http.Serve(ln)
	return s, nil
}

func findPython() string {
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3", "/usr/bin/python3.11"} {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return "python3"
}

// URL is the base URL for both E2B_API_URL and E2B_SANDBOX_URL.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Domain is the sandbox domain the fake reports.
func (s *Server) Domain() string { return s.opts.Domain }

// Close kills every sandbox, stops the server and removes its files.
func (s *Server) Close() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	close(s.done)
	s.mu.Lock()
	for _, sb := range s.sandboxes {
		s.killLocked(sb)
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if err != nil {
		s.http.Close()
	}
	s.wg.Wait()
	os.RemoveAll(s.root)
	return nil
}

// SetFault installs a fault (nil clears it).
func (s *Server) SetFault(f *Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = f
}

// Info describes a live sandbox.
type Info struct {
	ID       string
	Template string
	Metadata map[string]string
	EnvVars  map[string]string
	Procs    int
	EndAt    time.Time
}

// Live lists the live sandboxes, oldest first.
func (s *Server) Live() []Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Info
	for _, sb := range s.sandboxes {
		out = append(out, Info{ID: sb.id, Template: sb.template, Metadata: copyMap(sb.metadata),
			EnvVars: copyMap(sb.envVars), Procs: len(sb.procs), EndAt: sb.end})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Count is how many sandboxes are live.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sandboxes)
}

// Stats counts lifecycle events since New: Refused are creates answered 429 past
// Options.MaxSandboxes, Peak the most sandboxes live at once.
type Stats struct{ Created, Killed, Expired, LiveProcs, Refused, Peak int }

// Stats reports the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, sb := range s.sandboxes {
		n += len(sb.procs)
	}
	return Stats{Created: s.created, Killed: s.killed, Expired: s.expired, LiveProcs: n, Refused: s.refused, Peak: s.peak}
}

// FaultHits is how many requests a fault has affected since New.
func (s *Server) FaultHits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faultHits
}

// Requests is how many requests hit a route ("create", "kill", "list", "get", "timeout", "start", "signal", "execute", "health").
func (s *Server) Requests(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[route]
}

func (s *Server) count(route string) {
	s.mu.Lock()
	s.requests[route]++
	s.mu.Unlock()
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

var hostRe = regexp.MustCompile(`^(\d+)-([A-Za-z0-9_-]+)\.`)

// target says which sandbox port a request addresses, if any.
func target(r *http.Request) (id string, port int, ok bool) {
	if m := hostRe.FindStringSubmatch(r.Host); m != nil {
		p, _ := strconv.Atoi(m[1])
		return m[2], p, true
	}
	id = r.Header.Get("E2b-Sandbox-Id")
	if id == "" {
		return "", 0, false
	}
	port, _ = strconv.Atoi(r.Header.Get("E2b-Sandbox-Port"))
	if port == 0 {
		port = EnvdPort
		if r.URL.Path == "/execute" {
			port = InterpreterPort
		}
	}
	return id, port, true
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.wg.Add(1)
	defer s.wg.Done()
	id, port, isSandbox := target(r)
	scope := "api"
	if isSandbox {
		scope = "envd"
		if port == InterpreterPort {
			scope = "execute"
		}
	}
	if f := s.takeFault(scope); f != nil {
		if s.applyFault(w, r, f, scope) {
			return
		}
	}
	if !isSandbox {
		s.controlPlane(w, r)
		return
	}
	switch port {
	case EnvdPort:
		s.envd(w, r, id)
	case InterpreterPort:
		s.interpreter(w, r, id)
	default:
		// The edge answers unknown ports of a live sandbox with 502, as for a closed port.
		http.Error(w, fmt.Sprintf("port %d is not open in sandbox %s", port, id), http.StatusBadGateway)
	}
}

func (s *Server) takeFault(scope string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.fault
	if f == nil || (f.Scope != "" && f.Scope != scope) {
		return nil
	}
	f.hits++
	s.faultHits++
	if f.Times > 0 && f.hits >= f.Times {
		s.fault = nil
	}
	c := *f
	return &c
}

// applyFault misbehaves; it returns false when the request should then be served normally (a delay).
func (s *Server) applyFault(w http.ResponseWriter, r *http.Request, f *Fault, scope string) bool {
	if f.Delay > 0 {
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			return true
		case <-s.done:
			return true
		}
	}
	switch {
	case f.Handler != nil:
		f.Handler(w, r)
		return true
	case f.Hang:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return true
	case f.Status != 0:
		msg := http.StatusText(f.Status)
		if f.EchoKey {
			msg = "invalid key " + r.Header.Get("X-API-Key")
		}
		if scope == "execute" {
			http.Error(w, msg, f.Status)
			return true
		}
		writeJSON(w, f.Status, map[string]any{"code": f.Status, "message": msg})
		return true
	case f.Huge:
		s.huge(w, r, scope)
		return true
	case f.Garbage:
		s.garbage(w, r, scope)
		return true
	}
	return false
}

func (s *Server) huge(w http.ResponseWriter, r *http.Request, scope string) {
	fl, _ := w.(http.Flusher)
	chunk := strings.Repeat("A", 64<<10)
	switch scope {
	case "envd":
		w.Header().Set("Content-Type", "application/connect+json")
		w.WriteHeader(200)
		writeEnvelope(w, 0, map[string]any{"event": map[string]any{"start": map[string]any{"pid": 1}}})
		data := map[string]any{"event": map[string]any{"data": map[string]any{"stdout": []byte(chunk)}}}
		for r.Context().Err() == nil && !s.closed() {
			if err := writeEnvelope(w, 0, data); err != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		}
	case "execute":
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(200)
		io.WriteString(w, `{"type":"stdout","text":"`)
		for r.Context().Err() == nil && !s.closed() {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		io.WriteString(w, `{"sandboxID":"`)
		for r.Context().Err() == nil && !s.closed() {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	}
}

func (s *Server) garbage(w http.ResponseWriter, r *http.Request, scope string) {
	switch scope {
	case "envd":
		w.Header().Set("Content-Type", "application/connect+json")
		w.WriteHeader(200)
		// A frame announcing 4 GiB, then not JSON.
		w.Write([]byte{0, 0xff, 0xff, 0xff, 0xff})
		w.Write([]byte("\x00garbage\xff\xfe not json"))
	case "execute":
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(200)
		io.WriteString(w, "{\"type\":\"stdout\",\"text\":\"ok\"}\nthis is not json\n\x00\xff{{{\n")
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		io.WriteString(w, "{<html>garbage not json")
	}
}

func (s *Server) closed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status int, format string, a ...any) {
	writeJSON(w, status, map[string]any{"code": status, "message": fmt.Sprintf(format, a...)})
}

func newID(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// controlPlane serves the REST API.
func (s *Server) controlPlane(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/health" {
		w.WriteHeader(http.StatusOK)
		return
	}
	if r.Header.Get("X-API-Key") != s.opts.APIKey {
		s.count("unauthorized")
		apiError(w, http.StatusUnauthorized, "Invalid API key, please visit https://e2b.dev/docs/api-key")
		return
	}
	p := strings.TrimPrefix(r.URL.Path, "/v2")
	parts := strings.Split(strings.Trim(p, "/"), "/")
	switch {
	case len(parts) == 1 && parts[0] == "sandboxes" && r.Method == http.MethodPost:
		s.count("create")
		s.create(w, r)
	case len(parts) == 1 && parts[0] == "sandboxes" && r.Method == http.MethodGet:
		s.count("list")
		s.list(w, r)
	case len(parts) == 2 && parts[0] == "sandboxes" && r.Method == http.MethodGet:
		s.count("get")
		s.get(w, parts[1])
	case len(parts) == 2 && parts[0] == "sandboxes" && r.Method == http.MethodDelete:
		s.count("kill")
		if !s.Kill(parts[1]) {
			apiError(w, http.StatusNotFound, "sandbox %q not found", parts[1])
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case len(parts) == 3 && parts[0] == "sandboxes" && parts[2] == "timeout" && r.Method == http.MethodPost:
		s.count("timeout")
		s.setTimeout(w, r, parts[1])
	default:
		apiError(w, http.StatusNotFound, "%s %s is not served by the fake", r.Method, r.URL.Path)
	}
}

type createBody struct {
	TemplateID    string            `json:"templateID"`
	Timeout       *int              `json:"timeout"`
	Metadata      map[string]string `json:"metadata"`
	EnvVars       map[string]string `json:"envVars"`
	AllowInternet *bool             `json:"allow_internet_access"`
	Secure        *bool             `json:"secure"`
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	var b createBody
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&b); err != nil {
		apiError(w, http.StatusBadRequest, "invalid body: %v", err)
		return
	}
	if b.TemplateID == "" {
		apiError(w, http.StatusBadRequest, "templateID is required")
		return
	}
	ttl := DefaultTimeout
	if b.Timeout != nil {
		if *b.Timeout < 0 {
			apiError(w, http.StatusBadRequest, "timeout must be >= 0")
			return
		}
		ttl = time.Duration(*b.Timeout) * time.Second
	}
	if ttl > MaxTimeout {
		apiError(w, http.StatusBadRequest, "timeout cannot be greater than %d seconds", int(MaxTimeout.Seconds()))
		return
	}
	id := "i" + newID(10)
	dir := filepath.Join(s.root, id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		apiError(w, http.StatusInternalServerError, "sandbox directory: %v", err)
		return
	}
	if os.Geteuid() == 0 {
		os.Chown(dir, s.opts.UID, s.opts.GID)
	}
	now := time.Now()
	sb := &sandbox{id: id, template: b.TemplateID, token: newID(16), metadata: b.Metadata, envVars: b.EnvVars,
		allowInternet: b.AllowInternet, dir: dir, started: now, end: now.Add(ttl), procs: map[int]*proc{}}
	s.mu.Lock()
	if s.closed() {
		s.mu.Unlock()
		apiError(w, http.StatusServiceUnavailable, "shutting down")
		return
	}
	if n := len(s.sandboxes); s.opts.MaxSandboxes > 0 && n >= s.opts.MaxSandboxes {
		s.refused++
		s.mu.Unlock()
		os.RemoveAll(dir)
		apiError(w, http.StatusTooManyRequests, "You have reached the maximum number of concurrent E2B sandboxes (%d). If you need more, please contact us at 'https://e2b.dev/docs/getting-help'", s.opts.MaxSandboxes)
		return
	}
	s.sandboxes[id] = sb
	s.peak = max(s.peak, len(s.sandboxes))
	s.created++
	s.lastEnv = copyMap(b.EnvVars)
	sb.timer = time.AfterFunc(ttl, func() { s.expire(sb) })
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{
		"templateID": b.TemplateID, "sandboxID": id, "clientID": "e2bfake", "alias": b.TemplateID,
		"envdVersion": EnvdVersion, "envdAccessToken": sb.token, "domain": nil,
	})
}

func (s *Server) expire(sb *sandbox) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb.dead {
		return
	}
	if time.Now().Before(sb.end) { // the timeout was extended meanwhile
		return
	}
	s.expired++
	s.killLocked(sb)
}

// Kill kills a sandbox and every process in it; false if it is not live.
func (s *Server) Kill(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, ok := s.sandboxes[id]
	if !ok {
		return false
	}
	s.killed++
	s.killLocked(sb)
	return true
}

func (s *Server) killLocked(sb *sandbox) {
	if sb.dead {
		return
	}
	sb.dead = true
	if sb.timer != nil {
		sb.timer.Stop()
	}
	delete(s.sandboxes, sb.id)
	for _, p := range sb.procs {
		p.kill()
	}
	killTagged(sb.id)
	dir := sb.dir
	go func() {
		// Give killed processes a moment to be reaped before removing their cwd.
		time.Sleep(50 * time.Millisecond)
		os.RemoveAll(dir)
	}()
}

func (s *Server) lookup(id string) (*sandbox, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, ok := s.sandboxes[id]
	return sb, ok
}

func (s *Server) detail(sb *sandbox) map[string]any {
	md := sb.metadata
	if md == nil {
		md = map[string]string{}
	}
	d := map[string]any{
		"templateID": sb.template, "alias": sb.template, "sandboxID": sb.id, "clientID": "e2bfake",
		"startedAt": sb.started.UTC().Format(time.RFC3339Nano), "endAt": sb.end.UTC().Format(time.RFC3339Nano),
		"cpuCount": 2, "memoryMB": 512, "diskSizeMB": 1024, "metadata": md, "state": "running",
		"envdVersion": EnvdVersion,
	}
	if sb.allowInternet != nil {
		d["allowInternetAccess"] = *sb.allowInternet
	}
	return d
}

func (s *Server) get(w http.ResponseWriter, id string) {
	s.mu.Lock()
	sb, ok := s.sandboxes[id]
	var d map[string]any
	if ok {
		d = s.detail(sb)
		d["envdAccessToken"] = sb.token
	}
	s.mu.Unlock()
	if !ok {
		apiError(w, http.StatusNotFound, "sandbox %q not found", id)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// list filters by metadata (metadata=k%3Dv%26k2%3Dv2, URL-encoded pairs) and state, paging with
// limit and nextToken (X-Next-Token).
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	want := map[string]string{}
	if m := q.Get("metadata"); m != "" {
		pairs, err := url.ParseQuery(m)
		if err != nil {
			apiError(w, http.StatusBadRequest, "invalid metadata filter: %v", err)
			return
		}
		for k, v := range pairs {
			want[k] = v[0]
		}
	}
	if st := q.Get("state"); st != "" {
		okState := false
		for _, x := range strings.Split(st, ",") {
			if x == "running" {
				okState = true
			}
		}
		if !okState { // the fake has no paused sandboxes
			writeJSON(w, http.StatusOK, []any{})
			return
		}
	}
	limit := 100
	if l, err := strconv.Atoi(q.Get("limit")); err == nil && l > 0 && l <= 100 {
		limit = l
	}
	after := q.Get("nextToken")
	s.mu.Lock()
	var ids []string
	for id, sb := range s.sandboxes {
		match := true
		for k, v := range want {
			if sb.metadata[k] != v {
				match = false
			}
		}
		if match && id > after {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	if len(ids) > limit {
		w.Header().Set("X-Next-Token", ids[limit-1])
		ids = ids[:limit]
	}
	out := make([]any, 0, len(ids))
	for _, id := range ids {
		out = append(out, s.detail(s.sandboxes[id]))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) setTimeout(w http.ResponseWriter, r *http.Request, id string) {
	var b struct {
		Timeout int `json:"timeout"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&b); err != nil || b.Timeout < 0 {
		apiError(w, http.StatusBadRequest, "body must be {\"timeout\": seconds}")
		return
	}
	ttl := time.Duration(b.Timeout) * time.Second
	if ttl > MaxTimeout {
		apiError(w, http.StatusBadRequest, "timeout cannot be greater than %d seconds", int(MaxTimeout.Seconds()))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, ok := s.sandboxes[id]
	if !ok {
		apiError(w, http.StatusNotFound, "sandbox %q not found", id)
		return
	}
	sb.end = time.Now().Add(ttl)
	sb.timer.Stop()
	sb.timer = time.AfterFunc(ttl, func() { s.expire(sb) })
	w.WriteHeader(http.StatusNoContent)
}
