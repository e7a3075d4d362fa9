package e2bfake

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// tagVar marks every process of a sandbox, so a kill finds the ones that left its process group;
// ownerVar names the fake's pid, so a later fake can clean up after one that died without Close.
const (
	tagVar   = "E2BFAKE_SANDBOX"
	ownerVar = "E2BFAKE_OWNER"
)

// maxRequestFrame bounds a request envelope.
const maxRequestFrame = 1 << 20

func connectError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"code": code, "message": msg})
}

// envd serves the in-sandbox daemon on port 49983.
func (s *Server) envd(w http.ResponseWriter, r *http.Request, id string) {
	sb, ok := s.lookup(id)
	if !ok {
		// The edge answers for a sandbox that is gone (killed or timed out) with 502.
		http.Error(w, fmt.Sprintf("The sandbox %s was not found", id), http.StatusBadGateway)
		return
	}
	if r.URL.Path == "/health" {
		s.count("health")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Header.Get("X-Access-Token") != sb.token {
		connectError(w, http.StatusUnauthorized, "unauthenticated", "invalid access token")
		return
	}
	switch r.URL.Path {
	case "/process.Process/Start":
		s.count("start")
		s.start(w, r, sb)
	case "/process.Process/SendSignal":
		s.count("signal")
		s.signal(w, r, sb)
	case "/files":
		s.files(w, r, sb)
	case "/filesystem.Filesystem/ListDir", "/filesystem.Filesystem/Stat":
		s.filesystemRPC(w, r, sb, strings.TrimPrefix(r.URL.Path, "/filesystem.Filesystem/"))
	default:
		connectError(w, http.StatusNotFound, "unimplemented", r.URL.Path+" is not served by the fake")
	}
}

// writeEnvelope writes one Connect envelope: flags, big-endian length, JSON payload.
func writeEnvelope(w io.Writer, flags byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var h [5]byte
	h[0] = flags
	binary.BigEndian.PutUint32(h[1:], uint32(len(b)))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

type startRequest struct {
	Process struct {
		Cmd  string            `json:"cmd"`
		Args []string          `json:"args"`
		Envs map[string]string `json:"envs"`
		Cwd  *string           `json:"cwd"`
	} `json:"process"`
	Stdin *bool   `json:"stdin"`
	Tag   *string `json:"tag"`
}

func (s *Server) start(w http.ResponseWriter, r *http.Request, sb *sandbox) {
	req, ok := readStartRequest(w, r)
	if !ok {
		return
	}
	var timeout time.Duration
	if ms, err := strconv.ParseInt(r.Header.Get("Connect-Timeout-Ms"), 10, 64); err == nil && ms > 0 {
		timeout = time.Duration(ms) * time.Millisecond
	}
	var keepalive time.Duration
	if sec, err := strconv.Atoi(r.Header.Get("Keepalive-Ping-Interval")); err == nil && sec > 0 {
		keepalive = time.Duration(sec) * time.Second
	}
	dir := sb.dir
	if c := req.Process.Cwd; c != nil && *c != "" && *c != homeDir {
		// The fake has no sandbox filesystem: paths resolve inside the sandbox directory.
		_, rel := sandboxPath(*c)
		dir = filepath.Join(sb.dir, rel)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			s.streamError(w, "invalid_argument", fmt.Sprintf("cwd %q does not exist", *c))
			return
		}
	}
	if s.opts.Echo {
		echoStart(w, req)
		return
	}
	env := s.env(sb, req.Process.Envs)
	out := make(chan output, 16)
	p, err := s.run(sb, spec{path: req.Process.Cmd, args: req.Process.Args, env: env, dir: dir}, out)
	if err != nil {
		s.streamError(w, "internal", "error starting process: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/connect+json")
	w.WriteHeader(http.StatusOK)
	s.streamProcess(w, p, out, timeout, keepalive)
}

// readStartRequest reads Process/Start's one request envelope; when it is not a StartRequest it
// answers the Connect error itself and returns false.
func readStartRequest(w http.ResponseWriter, r *http.Request) (*startRequest, bool) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/connect+json") {
		connectError(w, http.StatusUnsupportedMediaType, "unknown", "the fake speaks Connect with the JSON codec only; got Content-Type "+ct)
		return nil, false
	}
	var h [5]byte
	if _, err := io.ReadFull(r.Body, h[:]); err != nil {
		connectError(w, http.StatusBadRequest, "invalid_argument", "reading the request envelope: "+err.Error())
		return nil, false
	}
	n := binary.BigEndian.Uint32(h[1:])
	if h[0]&1 != 0 || n > maxRequestFrame {
		connectError(w, http.StatusBadRequest, "invalid_argument", "compressed or oversized request envelope")
		return nil, false
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r.Body, body); err != nil {
		connectError(w, http.StatusBadRequest, "invalid_argument", "reading the request envelope: "+err.Error())
		return nil, false
	}
	var req startRequest
	if err := json.Unmarshal(body, &req); err != nil || req.Process.Cmd == "" {
		connectError(w, http.StatusBadRequest, "invalid_argument", fmt.Sprintf("bad StartRequest %q: %v", body, err))
		return nil, false
	}
	return &req, true
}

// echoStart answers Process/Start in Echo mode: the command's last argument as its stdout, exit 0,
// no process run.
func echoStart(w http.ResponseWriter, req *startRequest) {
	w.Header().Set("Content-Type", "application/connect+json")
	w.WriteHeader(http.StatusOK)
	text := ""
	if n := len(req.Process.Args); n > 0 {
		text = req.Process.Args[n-1]
	}
	writeEnvelope(w, 0, map[string]any{"event": map[string]any{"start": map[string]any{"pid": 1}}})
	writeEnvelope(w, 0, map[string]any{"event": map[string]any{"data": map[string]any{"stdout": []byte(text)}}})
	writeEnvelope(w, 0, map[string]any{"event": map[string]any{"end": map[string]any{"exited": true, "status": "exit status 0"}}})
	writeEnvelope(w, 2, map[string]any{})
}

// streamProcess streams p's events (start, its output from out, keepalives every keepalive, end)
// and the end-of-stream envelope, killing p when timeout passes (the trailer then says
// deadline_exceeded) or the server closes.
func (s *Server) streamProcess(w http.ResponseWriter, p *proc, out chan output, timeout, keepalive time.Duration) {
	fl, _ := w.(http.Flusher)
	flush := func() {
		if fl != nil {
			fl.Flush()
		}
	}
	ev := func(e map[string]any) error { return writeEnvelope(w, 0, map[string]any{"event": e}) }
	ev(map[string]any{"start": map[string]any{"pid": p.pid}})
	flush()

	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	var tick <-chan time.Time
	if keepalive > 0 {
		tk := time.NewTicker(keepalive)
		defer tk.Stop()
		tick = tk.C
	}
	timedOut, gone := false, false
	stop := s.done
	for out != nil {
		select {
		case o, ok := <-out:
			if !ok {
				out = nil
				continue
			}
			key := "stdout"
			if o.stderr {
				key = "stderr"
			}
			if !gone && ev(map[string]any{"data": map[string]any{key: o.data}}) != nil {
				gone = true // the client left; the process keeps running, as in envd
			}
			flush()
		case <-tick:
			if !gone && ev(map[string]any{"keepalive": map[string]any{}}) != nil {
				gone = true
			}
			flush()
		case <-deadline:
			timedOut = true
			p.kill()
			deadline = nil
		case <-stop:
			p.kill()
			stop = nil
		}
	}
	<-p.done
	code, status := exitCode(p.err)
	end := map[string]any{"exited": true, "status": status}
	if code != 0 {
		end["exitCode"] = code
		end["error"] = status
	}
	ev(map[string]any{"end": end})
	trailer := map[string]any{}
	if timedOut {
		trailer["error"] = map[string]any{"code": "deadline_exceeded", "message": "the process exceeded the request deadline"}
	}
	writeEnvelope(w, 2, trailer)
	flush()
}

// streamError answers a streaming call that failed before it started: HTTP 200 and an end-stream
// envelope carrying the error, as connect-go does.
func (s *Server) streamError(w http.ResponseWriter, code, msg string) {
	w.Header().Set("Content-Type", "application/connect+json")
	w.WriteHeader(http.StatusOK)
	writeEnvelope(w, 2, map[string]any{"error": map[string]any{"code": code, "message": msg}})
}

// env is a program's complete environment: a fixed base, the sandbox's variables from create,
// the request's, and the tag. Nothing of the fake's own environment leaks in.
func (s *Server) env(sb *sandbox, extra map[string]string) []string {
	m := map[string]string{
		"PATH": filepath.Join(s.root, "bin") + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME": sb.dir, "USER": "user", "LANG": "C.UTF-8", "E2B_SANDBOX": "true", "E2B_SANDBOX_ID": sb.id,
	}
	for k, v := range sb.envVars {
		m[k] = v
	}
	for k, v := range extra {
		m[k] = v
	}
	m[tagVar] = sb.id
	m[ownerVar] = strconv.Itoa(os.Getpid())
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

var signals = map[string]bool{"SIGNAL_SIGKILL": true, "SIGNAL_SIGTERM": true, "9": true, "15": true}

func (s *Server) signal(w http.ResponseWriter, r *http.Request, sb *sandbox) {
	var req struct {
		Process struct {
			Pid *int    `json:"pid"`
			Tag *string `json:"tag"`
		} `json:"process"`
		Signal json.RawMessage `json:"signal"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil || req.Process.Pid == nil {
		connectError(w, http.StatusBadRequest, "invalid_argument", "body must be {\"process\":{\"pid\":N},\"signal\":\"SIGNAL_SIGKILL\"}")
		return
	}
	if !signals[strings.Trim(string(req.Signal), `"`)] {
		connectError(w, http.StatusBadRequest, "invalid_argument", "unsupported signal "+string(req.Signal))
		return
	}
	s.mu.Lock()
	p, ok := sb.procs[*req.Process.Pid]
	s.mu.Unlock()
	if !ok {
		connectError(w, http.StatusNotFound, "not_found", fmt.Sprintf("process with pid %d not found", *req.Process.Pid))
		return
	}
	p.kill()
	writeJSON(w, http.StatusOK, map[string]any{})
}
