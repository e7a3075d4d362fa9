package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The undertaker is E2B's counterpart of docker's in-container watchdog. A sandbox is a remote
// microVM: nothing in it can see serve die, and envd keeps a command running when the client's
// stream breaks. So serve starts, next to itself, a small process of its own binary (re-executed
// with undertakerEnv set, in a session of its own, so a signal to serve's process group does not
// reach it). It reads a pipe from serve: first the control plane's address and the key, then
// "+ID" for each sandbox created and "-ID" for each one killed. When the pipe ends (serve exited,
// crashed or was SIGKILLed: the kernel closes the pipe), it kills every sandbox still listed,
// then exits. A clean Close has killed them already; the undertaker then finds none. If the undertaker is killed too (a kill of the whole cgroup), the leash is the
// backstop: every sandbox lives at E2B a leash at a time (defaultLeash).
const undertakerEnv = "MCPSANDBOX_E2B_UNDERTAKER"

func init() {
	if os.Getenv(undertakerEnv) == "1" {
		os.Exit(runUndertaker(os.Stdin))
	}
}

// undertakerConfig is the pipe's first line.
type undertakerConfig struct {
	APIURL string `json:"api_url"`
	Key    string `json:"key"`
}

// undertakerWrite bounds one write to the undertaker's pipe: a stopped or stuck undertaker
// (SIGSTOP, a full pipe) must not hold a call; past it the undertaker is given up on (the leash
// remains).
const undertakerWrite = time.Second

type undertaker struct {
	mu     sync.Mutex
	w      *os.File
	broken bool
	done   chan struct{} // closed when the process has exited
}

// startUndertaker starts the undertaker for the control plane cfg points at.
func startUndertaker(cfg Config) (*undertaker, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find serve's own binary: %w", err)
	}
	cmd := exec.Command(exe, "e2b-undertaker")
	// Its own environment minus the key (it gets the key on the pipe), and a neutral directory:
	// nothing ties it to a workspace.
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, undertakerEnv+"=") || (cfg.KeyEnv != "" && strings.HasPrefix(kv, cfg.KeyEnv+"=")) {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, undertakerEnv+"=1")
	cmd.Dir = os.TempDir()
	detach(cmd)
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin = r
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("start %s as the undertaker: %w", exe, err)
	}
	u := &undertaker{w: w, done: make(chan struct{})}
	go func() { cmd.Wait(); close(u.done) }()
	line, _ := json.Marshal(undertakerConfig{APIURL: cfg.APIURL, Key: cfg.APIKey})
	if err := u.send(string(line)); err != nil {
		return nil, fmt.Errorf("the undertaker did not take its configuration: %w", err)
	}
	return u, nil
}

func (u *undertaker) send(line string) error {
	if u == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.broken {
		return io.ErrClosedPipe
	}
	u.w.SetWriteDeadline(time.Now().Add(undertakerWrite))
	if _, err := io.WriteString(u.w, line+"\n"); err != nil {
		u.broken = true
		return err
	}
	return nil
}

func (u *undertaker) add(id string)    { u.send("+" + id) }
func (u *undertaker) remove(id string) { u.send("-" + id) }

// close ends the pipe (serve has killed its sandboxes itself) and waits briefly for the exit.
func (u *undertaker) close() {
	if u == nil {
		return
	}
	u.mu.Lock()
	u.w.Close()
	u.broken = true
	u.mu.Unlock()
	select {
	case <-u.done:
	case <-time.After(2 * time.Second):
	}
}

// runUndertaker is the undertaker process: it returns its exit status.
func runUndertaker(in io.Reader) int {
	// Serve's terminal or supervisor may signal the whole group: the pipe decides, not signals.
	signal.Ignore(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	if !sc.Scan() {
		return 2
	}
	var cfg undertakerConfig
	if err := json.Unmarshal(sc.Bytes(), &cfg); err != nil || cfg.APIURL == "" {
		return 2
	}
	live := map[string]bool{}
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "+"):
			live[l[1:]] = true
		case strings.HasPrefix(l, "-"):
			delete(live, l[1:])
		}
	}
	// The pipe ended: serve is gone. A clean Close killed its sandboxes and listed none; what is
	// still listed is a sandbox serve could not kill, or never got to.
	c := NewClient(Config{APIKey: cfg.Key, APIURL: cfg.APIURL, Retries: 2, RequestTimeout: 10 * time.Second})
	var wg sync.WaitGroup
	for id := range live {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
			defer cancel()
			c.Kill(ctx, id)
		}()
	}
	wg.Wait()
	return 0
}
