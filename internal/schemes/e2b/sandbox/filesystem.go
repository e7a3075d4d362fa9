package sandbox

import (
	"bytes"
	"context"
	"errors"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The file tools over envd (executor.FileSystem). They are offered with reuse = "session" only:
// with reuse = "call" every call gets a fresh sandbox that is killed when the call ends, so a
// file written by write_file would be gone before the next call could use it, and read_file or
// list_files could only ever see the template's own files. The session's sandbox is the one its
// run_code and run_command calls use: a file written here is there for the code, and a file
// the code made can be read back. Paths are the sandbox's: E2B's microVM is the boundary, so
// no path inside it is refused beyond FileTools' own checks; relative paths are relative to
// /home/user, where the code runs.

var _ executor.FileSystem = (*Executor)(nil)

// fileTools are the file tools when the policy allows them (limits.max_file_bytes > 0) and
// sandboxes are kept for a session.
func (e *Executor) fileTools() []executor.Tool {
	if e.cfg.Reuse != "session" || e.pol.Limits.MaxFileBytes <= 0 {
		return nil
	}
	where := "The file lives in this session's E2B sandbox, the one run_code and run_command use: relative paths are relative to " + homeDir + ", where the code runs."
	return executor.FileTools(e, int64(e.pol.Limits.MaxFileBytes), where, "", &mcp.ToolAnnotations{OpenWorldHint: boolPtr(e.cfg.AllowInternet)})
}

// inSession runs f with the call's session sandbox (created if the session has none yet), as
// one of its calls. A sandbox found gone (expired) is replaced once, as run_code does.
func (e *Executor) inSession(ctx context.Context, c executor.Call, f func(sb *Sandbox) error) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return errors.New("serve is shutting down")
	}
	e.inflight.Add(1)
	e.mu.Unlock()
	defer e.inflight.Done()
	if e.keyErr != nil {
		return e.keyErr
	}
	if mutated("e2b-files-session") {
		c.Session = "" // every session's file tools share one sandbox
	}
	note := ""
	defer func() {
		// A file tool's result has no room for the note: the session's next run_code or
		// run_command is told (an error of this call says it too).
		if note != "" {
			e.mu.Lock()
			if s := e.sessions[c.Session]; s != nil && s.note == "" {
				s.note = note
			}
			e.mu.Unlock()
		}
	}()
	for attempt := 0; ; attempt++ {
		sb, n, err := e.acquire(ctx, c)
		if err != nil {
			return e.redactErr(withNote(err, note))
		}
		if n != "" {
			note = n
		}
		err = f(sb)
		e.release(sb)
		if errors.Is(err, ErrSandboxGone) && attempt == 0 && ctx.Err() == nil {
			e.log.Info("e2b: the session's sandbox was gone; starting a new one", "sandbox", sb.ID)
			e.drop(c.Session, sb)
			continue
		}
		if err != nil {
			return e.redactErr(withNote(err, note))
		}
		return nil
	}
}

// WriteFile writes data at p in the session's sandbox.
func (e *Executor) WriteFile(ctx context.Context, c executor.Call, p string, data []byte) (*executor.Result, error) {
	err := e.inSession(ctx, c, func(sb *Sandbox) error {
		_, err := e.client.WriteFile(ctx, sb, p, data)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &executor.Result{}, nil
}

// ReadFile reads at most max bytes of the file at p in the session's sandbox. The key never
// entered the sandbox; a hostile upstream echoing it in a file's bytes gets it redacted, as in
// every other result.
func (e *Executor) ReadFile(ctx context.Context, c executor.Call, p string, max int64) ([]byte, int64, error) {
	var data []byte
	var size int64
	err := e.inSession(ctx, c, func(sb *Sandbox) error {
		var err error
		data, size, err = e.client.ReadFile(ctx, sb, p, max)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	if k := e.client.cfg.APIKey; k != "" && bytes.Contains(data, []byte(k)) {
		data = []byte(e.redact(string(data)))
	}
	return data, size, nil
}

// ListFiles lists the directory at p ("" = /home/user) in the session's sandbox.
func (e *Executor) ListFiles(ctx context.Context, c executor.Call, p string) ([]executor.FileEntry, int, error) {
	if p == "" {
		p = homeDir
	}
	var entries []executor.FileEntry
	var more int
	err := e.inSession(ctx, c, func(sb *Sandbox) error {
		var err error
		entries, more, err = e.client.ListDir(ctx, sb, p)
		return err
	})
	return entries, more, err
}
