package e2bfake

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

//go:embed runner.py
var runnerPy string

// maxEventLine bounds one result or error event of a cell, maxEventsHeld all of them (the fake
// sends them after the cell's output).
const (
	maxEventLine  = 16 << 20
	maxEventsHeld = 64 << 20
)

type executeRequest struct {
	Code      string            `json:"code"`
	Language  *string           `json:"language"`
	ContextID *string           `json:"context_id"`
	EnvVars   map[string]string `json:"env_vars"`
}

// interpreter serves the code interpreter's POST /execute on port 49999: NDJSON events ending
// with end_of_execution; code errors are an "error" event inside a 200 answer.
func (s *Server) interpreter(w http.ResponseWriter, r *http.Request, id string) {
	sb, req, ok := s.executeRequest(w, r, id)
	if !ok {
		return
	}
	lang := "python"
	if req.Language != nil && *req.Language != "" {
		lang = *req.Language
	}
	codeFile := filepath.Join(sb.dir, fmt.Sprintf(".cell-%s.src", newID(6)))
	if err := os.WriteFile(codeFile, []byte(req.Code), 0o644); err != nil {
		http.Error(w, "writing the cell: "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer os.Remove(codeFile)
	sp, evR, evW, ok := s.cellSpec(w, sb, req, lang, codeFile)
	if !ok {
		return
	}
	s.mu.Lock()
	sb.executions++
	n := sb.executions
	s.mu.Unlock()
	out := make(chan output, 16)
	p, err := s.run(sb, sp, out)
	if evW != nil {
		evW.Close()
	}
	if err != nil {
		if evR != nil {
			evR.Close()
		}
		http.Error(w, "starting the kernel: "+err.Error(), http.StatusInternalServerError)
		return
	}
	s.streamCell(w, r, p, out, collectEvents(evR), n)
}

// executeRequest checks an interpreter request (the sandbox, its token, the route) and reads its
// body; it answers /health and every refusal itself, returning false.
func (s *Server) executeRequest(w http.ResponseWriter, r *http.Request, id string) (*sandbox, *executeRequest, bool) {
	sb, ok := s.lookup(id)
	if !ok {
		http.Error(w, fmt.Sprintf("The sandbox %s was not found", id), http.StatusBadGateway)
		return nil, nil, false
	}
	if r.URL.Path == "/health" {
		w.WriteHeader(http.StatusOK)
		return nil, nil, false
	}
	if r.Header.Get("X-Access-Token") != sb.token {
		http.Error(w, "invalid access token", http.StatusUnauthorized)
		return nil, nil, false
	}
	if r.URL.Path != "/execute" || r.Method != http.MethodPost {
		http.Error(w, "not found", http.StatusNotFound)
		return nil, nil, false
	}
	s.count("execute")
	var req executeRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 8<<20)).Decode(&req); err != nil {
		http.Error(w, "invalid body: "+err.Error(), http.StatusBadRequest)
		return nil, nil, false
	}
	if req.Language != nil && req.ContextID != nil {
		http.Error(w, "language and context_id are mutually exclusive", http.StatusBadRequest)
		return nil, nil, false
	}
	if req.ContextID != nil {
		http.Error(w, "context "+*req.ContextID+" not found", http.StatusNotFound)
		return nil, nil, false
	}
	return sb, &req, true
}

// cellSpec is how a cell of lang in codeFile runs; a Python cell also gets the pipe its runner
// writes result and error events to (evR, evW). An unsupported language is answered here,
// returning false.
func (s *Server) cellSpec(w http.ResponseWriter, sb *sandbox, req *executeRequest, lang, codeFile string) (sp spec, evR, evW *os.File, ok bool) {
	sp = spec{env: s.env(sb, req.EnvVars), dir: sb.dir}
	switch lang {
	case "python", "python3":
		var err error
		if evR, evW, err = os.Pipe(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return sp, nil, nil, false
		}
		sp.path, sp.args, sp.extra = s.opts.Python, []string{"-u", filepath.Join(s.root, "runner.py"), codeFile}, []*os.File{evW}
	case "bash", "sh":
		sp.path, sp.args = "/bin/bash", []string{codeFile}
	case "js", "javascript":
		node, err := exec.LookPath("node")
		if err != nil {
			http.Error(w, "javascript is not available in this sandbox", http.StatusBadRequest)
			return sp, nil, nil, false
		}
		sp.path, sp.args = node, []string{codeFile}
	default:
		http.Error(w, fmt.Sprintf("language %q is not supported (python, bash, javascript)", lang), http.StatusBadRequest)
		return sp, nil, nil, false
	}
	return sp, evR, evW, true
}

// collectEvents reads the runner's event lines from evR (nil: none) in the background, within
// maxEventLine each and maxEventsHeld in all, and closes it; the returned func waits for the
// end of the stream and gives the events.
func collectEvents(evR *os.File) func() []json.RawMessage {
	var events []json.RawMessage
	evDone := make(chan struct{})
	go func() {
		defer close(evDone)
		if evR == nil {
			return
		}
		defer evR.Close()
		sc := bufio.NewScanner(evR)
		sc.Buffer(make([]byte, 64<<10), maxEventLine)
		held := 0
		for sc.Scan() {
			if held += len(sc.Bytes()); held > maxEventsHeld {
				continue // a cell displaying without end: what is past the bound is dropped
			}
			events = append(events, json.RawMessage(append([]byte(nil), sc.Bytes()...)))
		}
		io.Copy(io.Discard, evR) // a line past maxEventLine ends the scan: let the cell finish
	}()
	return func() []json.RawMessage {
		<-evDone
		return events
	}
}

// streamCell answers /execute for the running cell p (execution number n): its output from out
// as it comes, keepalives, then the held events and end_of_execution. The client leaving or the
// server closing interrupts the cell.
func (s *Server) streamCell(w http.ResponseWriter, r *http.Request, p *proc, out chan output, events func() []json.RawMessage, n int) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	send := func(v any) {
		enc.Encode(v)
		if fl != nil {
			fl.Flush()
		}
	}
	send(map[string]any{"type": "number_of_executions", "execution_count": n})
	keep := time.NewTicker(5 * time.Second)
	defer keep.Stop()
	gone, stop := r.Context().Done(), s.done
	for out != nil {
		select {
		case o, ok := <-out:
			if !ok {
				out = nil
				continue
			}
			typ := "stdout"
			if o.stderr {
				typ = "stderr"
			}
			send(map[string]any{"type": typ, "text": string(o.data), "timestamp": time.Now().UTC().Format(time.RFC3339Nano)})
		case <-keep.C:
			send(map[string]any{"type": "keepalive"})
		case <-gone:
			// The client went away: interrupt the cell (the kernel would stay busy otherwise).
			p.kill()
			gone = nil
		case <-stop:
			p.kill()
			stop = nil
		}
	}
	<-p.done
	held := events()
	for _, e := range held {
		w.Write(e)
		w.Write([]byte("\n"))
	}
	if code, status := exitCode(p.err); code != 0 && len(held) == 0 {
		// A non-Python cell (or a killed kernel) failed without a structured error.
		send(map[string]any{"type": "error", "name": "ExitError", "value": status, "traceback": status})
	}
	send(map[string]any{"type": "end_of_execution"})
}
