package sandbox

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// sessionFiles is executor.FileSystem for docker.reuse = "session": write_file, read_file and
// list_files act inside the session's own container, done by its supervisor (session_wrapper.go)
// as the container's user, so the container's own permissions decide what may be written or
// read (its /tmp, /workspace when mounted, read-only elsewhere). Relative paths are relative to
// the session interpreter's working directory. A session without a container gets one first,
// as its first run_python_sandbox call would (docker.max_sessions applies).
//
// The bytes go to the supervisor length-framed on the attached stdin (never through a command
// line) and come back as a data record (frames.go), base64, taken out of the stream within a
// bound fixed by serve before the call: the container is hostile, and whatever it answers serve
// holds at most the record budget of it (for read_file: max_bytes+1 bytes, base64) and checks
// the answer's form before using it. The supervisor itself reads at most max_bytes+1 bytes.
type sessionFiles struct{ e *Executor }

// fileBudget bounds the data records of a file tool's answer: read_file's max+1 bytes in base64,
// or list_files's MaxListEntries names (at most 255 bytes each), with room for the fields.
func fileBudget(kind string, max int64) int {
	if mutated("docker-files-budget") {
		return 1 << 40
	}
	if kind == "read" {
		return b64Len(max+1) + 64
	}
	if kind == "list" {
		return executor.MaxListEntries*(b64Len(255)+32) + 64
	}
	return 256
}

// op runs one file operation in the call's session and returns the fields of its answer record,
// whose kind is want ("w", "r" or "l"); an "e" record is the container's error.
func (f sessionFiles) op(ctx context.Context, c executor.Call, kind string, payload []byte, budget int, want string) ([][]byte, string, error) {
	e := f.e
	if c.Session == "" {
		return nil, "", executor.Refuse("docker.reuse", "the file tools work in an MCP session's container, and this call has no session (a stateless HTTP request?)")
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = e.pol.Limits.Timeout.Duration
	}
	var hardStop time.Time
	if d, ok := ctx.Deadline(); ok {
		hardStop = d.Add(startGrace)
	}
	ctx, cancel := e.callContext(ctx)
	defer cancel()
	if err := e.readyBy(ctx, hardStop); errors.Is(err, errStartTimedOut) {
		return nil, "", errors.New("serve's start-up checks of the docker engine did not finish within the call's timeout: retry")
	} else if err != nil {
		return nil, "", err
	}
	tap := newDataTap(nil, "", budget)
	c.MaxOutput = 4096 // the supervisor writes no output for a file operation: what comes is noise
	res, err := e.sessionCall(ctx, c, kind, string(payload), false, timeout, hardStop, tap)
	if err != nil {
		return nil, "", err
	}
	note := ""
	if i := strings.Index(res.Stderr, "[mcpsandbox: "); i >= 0 {
		note = strings.TrimSpace(res.Stderr[i:])
	}
	if res.TimedOut {
		return nil, "", fmt.Errorf("the file operation did not finish within %s in the session's container; %s", timeout, note)
	}
	recs, dropped := tap.take()
	if len(recs) == 0 {
		if dropped > 0 {
			return nil, "", executor.Refuse(executor.RuleFileSize, "the session's container answered more than serve reads for this operation (%d bytes of records): the answer was dropped", budget)
		}
		return nil, "", fmt.Errorf("the session's container gave no answer (exit status %d) %s", res.ExitCode, note)
	}
	r := recs[len(recs)-1] // the supervisor's answer comes last, after anything a program wrote
	switch {
	case string(r[0]) == "e" && len(r) == 2:
		msg, _ := base64.StdEncoding.DecodeString(string(r[1]))
		return nil, "", &executor.FileError{Msg: strings.TrimSpace(fmt.Sprintf("in the session's container: %s %s", string(msg[:min(len(msg), 1024)]), note))}
	case string(r[0]) != want:
		return nil, "", fmt.Errorf("the session's container gave a malformed answer (a record %.8q)", r[0])
	}
	return r[1:], note, nil
}

// WriteFile implements executor.FileSystem.
func (f sessionFiles) WriteFile(ctx context.Context, c executor.Call, p string, data []byte) (*executor.Result, error) {
	payload := make([]byte, 0, len(p)+len(data)+24)
	payload = append(strconv.AppendInt(payload, int64(len(p)), 10), '\n')
	payload = append(append(payload, p...), data...)
	r, note, err := f.op(ctx, c, "write", payload, fileBudget("write", 0), "w")
	if err != nil {
		return nil, err
	}
	if len(r) != 1 || string(r[0]) != strconv.Itoa(len(data)) {
		return nil, fmt.Errorf("the session's container did not confirm writing %d bytes at %s", len(data), p)
	}
	return &executor.Result{Stderr: noteLine(note)}, nil
}

// ReadFile implements executor.FileSystem.
func (f sessionFiles) ReadFile(ctx context.Context, c executor.Call, p string, max int64) ([]byte, int64, error) {
	payload := []byte(strconv.FormatInt(max, 10) + "\n" + p)
	r, _, err := f.op(ctx, c, "read", payload, fileBudget("read", max), "r")
	if err != nil {
		return nil, 0, err
	}
	return parseRead(r, max)
}

// parseRead reads read_file's answer, "SIZE,DATA": at most max bytes of DATA are kept, and the
// size is never below what came.
func parseRead(r [][]byte, max int64) ([]byte, int64, error) {
	if len(r) != 2 {
		return nil, 0, errors.New("the session's container gave a malformed answer to read_file")
	}
	size, err1 := strconv.ParseInt(string(r[0]), 10, 64)
	data, err2 := base64.StdEncoding.DecodeString(string(r[1]))
	if err1 != nil || err2 != nil || size < 0 {
		return nil, 0, errors.New("the session's container gave a malformed answer to read_file")
	}
	if int64(len(data)) > size {
		size = int64(len(data)) // the declared size is the container's word: never below what came
	}
	if int64(len(data)) > max {
		data = data[:max]
	}
	return data, size, nil
}

// ListFiles implements executor.FileSystem.
func (f sessionFiles) ListFiles(ctx context.Context, c executor.Call, p string) ([]executor.FileEntry, int, error) {
	r, _, err := f.op(ctx, c, "list", []byte(p), fileBudget("list", 0), "l")
	if err != nil {
		return nil, 0, err
	}
	return parseList(r)
}

// parseList reads list_files's answer, "MORE(,NAME,TYPE,SIZE)*".
func parseList(r [][]byte) ([]executor.FileEntry, int, error) {
	bad := errors.New("the session's container gave a malformed answer to list_files")
	if len(r) < 1 || (len(r)-1)%3 != 0 || (len(r)-1)/3 > executor.MaxListEntries {
		return nil, 0, bad
	}
	more, err := strconv.Atoi(string(r[0]))
	if err != nil || more < 0 {
		return nil, 0, bad
	}
	types := map[string]string{"f": "file", "d": "dir", "l": "link", "o": "other"}
	var out []executor.FileEntry
	for i := 1; i+2 < len(r); i += 3 {
		name, err1 := base64.StdEncoding.DecodeString(string(r[i]))
		size, err2 := strconv.ParseInt(string(r[i+2]), 10, 64)
		typ, ok := types[string(r[i+1])]
		if err1 != nil || err2 != nil || !ok || len(name) == 0 || len(name) > 1024 || size < 0 {
			return nil, 0, bad
		}
		out = append(out, executor.FileEntry{Name: string(name), Type: typ, Size: size})
	}
	return out, more, nil
}

func noteLine(note string) string {
	if note == "" {
		return ""
	}
	return note + "\n"
}

// sessionFilesWhere says, for the file tools' descriptions, where the session's files are.
func sessionFilesWhere(where string) string {
	return "The file is in this session's own container (the one run_python_sandbox and run_shell_sandbox use), as its user: " + where +
		"; relative paths are relative to the session interpreter's working directory. Pictures a program writes to " + outputsDir +
		" come back with its call as images."
}
