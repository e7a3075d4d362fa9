package e2bfake

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// proc is one program running in a sandbox.
type proc struct {
	cmd  *exec.Cmd
	pid  int
	once sync.Once
	done chan struct{} // closed when the process has been waited for
	err  error
}

func (p *proc) kill() {
	p.once.Do(func() { killGroup(p.cmd) })
}

// spec is what to run.
type spec struct {
	path  string
	args  []string
	env   []string
	dir   string
	extra []*os.File
}

// output is one chunk a program wrote.
type output struct {
	stderr bool
	data   []byte
}

// run starts a program in sb, registers it, and streams its output to out until both streams
// close (or a short grace after it exits, so a background child holding them cannot stall the
// caller). The returned proc's done channel closes when it has exited.
func (s *Server) run(sb *sandbox, sp spec, out chan<- output) (*proc, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd := exec.Command(sp.path, sp.args...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = sp.env, sp.dir, outW, errW, sp.extra
	cmd.SysProcAttr = sysProcAttr(os.Geteuid() == 0, s.opts.UID, s.opts.GID)
	s.mu.Lock()
	if sb.dead {
		s.mu.Unlock()
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return nil, errors.New("sandbox is not running")
	}
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		s.mu.Unlock()
		outR.Close()
		errR.Close()
		return nil, err
	}
	p := &proc{cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{})}
	sb.procs[p.pid] = p
	s.mu.Unlock()

	var readers sync.WaitGroup
	pump := func(r *os.File, stderr bool) {
		defer readers.Done()
		defer r.Close()
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				out <- output{stderr: stderr, data: append([]byte(nil), buf[:n]...)}
			}
			if err != nil {
				return
			}
		}
	}
	readers.Add(2)
	go pump(outR, false)
	go pump(errR, true)
	go func() {
		p.err = cmd.Wait()
		s.mu.Lock()
		delete(sb.procs, p.pid)
		s.mu.Unlock()
		// Streams normally close with the process; a background child may hold them open.
		drained := make(chan struct{})
		go func() { readers.Wait(); close(drained) }()
		select {
		case <-drained:
		case <-time.After(200 * time.Millisecond):
			outR.Close()
			errR.Close()
			<-drained
		}
		close(out)
		close(p.done)
	}()
	return p, nil
}

// exitCode follows envd: the exit status, or -1 when a signal ended the process.
func exitCode(err error) (code int, status string) {
	if err == nil {
		return 0, "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), ee.Error()
	}
	return -1, err.Error()
}

var _ = io.EOF
