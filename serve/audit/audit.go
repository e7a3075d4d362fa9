// Package audit writes the tamper-evident call log: one JSON line per call, each carrying the
// sha256 of the line before it, so editing or deleting a line breaks the chain at that point.
package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Entry is one audit line.
type Entry struct {
	Time       string          `json:"time"`
	Server     string          `json:"server"`
	PID        int             `json:"pid"`
	Session    string          `json:"session,omitempty"` // the MCP session the call came in
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	Decision   string          `json:"decision"` // "ran", "refused", "error", "cancelled"
	Rule       string          `json:"rule,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	ExitCode   *int            `json:"exit_code,omitempty"`
	DurationMS int64           `json:"duration_ms"`
	Truncated  bool            `json:"truncated"`
	TimedOut   bool            `json:"timed_out"`
	PolicyHash string          `json:"policy_hash"`
	Prev       string          `json:"prev"` // hash of the previous entry; "" for the first
	Hash       string          `json:"hash"` // sha256 of this entry encoded with hash = ""
}

// seal computes the entry's own hash: edits to any line, the last one included, show unless the
// editor recomputes every hash after it (the head hash that verify prints catches that).
func (e *Entry) seal() ([]byte, error) {
	e.Hash = ""
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	e.Hash = hex.EncodeToString(sum[:])
	return json.Marshal(e)
}

// maxArgBytes bounds a logged argument blob so every line stays small enough to find the chain
// head by reading the file's tail.
const maxArgBytes = 16 << 10

const tailRead = 64 << 10

// Log appends entries. It is safe for concurrent use, and across processes: every append holds
// an exclusive flock, so two servers sharing one file keep one unbroken chain.
type Log struct {
	mu     sync.Mutex
	f      *os.File
	redact *strings.Replacer
}

// DefaultPath is $XDG_STATE_HOME/mcpsandbox/audit.jsonl (or ~/.local/state/...).
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the audit log's default place: %w (set audit.path in the policy)", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "mcpsandbox", "audit.jsonl"), nil
}

// Open opens (creating 0600, parents 0700) the log at path. env is the server's environment:
// values of secret-looking variables are redacted from everything logged.
func Open(path string, env []string) (*Log, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create audit log directory: %w (set audit.path to a writable place)", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w (set audit.path to a writable place)", err)
	}
	return &Log{f: f, redact: secretRedactor(env)}, nil
}

var secretName = regexp.MustCompile(`(?i)(KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|SESSION|COOKIE|PRIVATE)`)

// secretRedactor replaces the values of secret-looking variables (6+ characters) with a marker.
// Longest values first, so a secret that contains another is replaced whole.
func secretRedactor(env []string) *strings.Replacer {
	type kv struct{ k, v string }
	var secrets []kv
	for _, e := range env {
		k, v, ok := strings.Cut(e, "=")
		if ok && len(v) >= 6 && secretName.MatchString(k) {
			secrets = append(secrets, kv{k, v})
		}
	}
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i].v) > len(secrets[j].v) })
	var pairs []string
	for _, s := range secrets {
		pairs = append(pairs, s.v, "[redacted:"+s.k+"]")
	}
	return strings.NewReplacer(pairs...)
}

// Append writes e, filling Time, PID and Prev.
func (l *Log) Append(e Entry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := lockFile(l.f); err != nil {
		return fmt.Errorf("lock audit log: %w", err)
	}
	defer unlockFile(l.f)

	prev, err := lastLineHash(l.f)
	if err != nil {
		return err
	}
	e.Prev = prev
	e.PID = os.Getpid()
	if e.Time == "" {
		e.Time = time.Now().UTC().Format(time.RFC3339Nano)
	}
	args := l.redact.Replace(string(e.Arguments))
	if len(args) > maxArgBytes || !json.Valid([]byte(args)) {
		if len(args) > maxArgBytes {
			args = args[:maxArgBytes]
		}
		b, _ := json.Marshal(map[string]any{"truncated_text": strings.ToValidUTF8(args, "?")})
		args = string(b)
	}
	e.Arguments = json.RawMessage(args)
	e.Reason = l.redact.Replace(e.Reason)
	line, err := e.seal()
	if err != nil {
		return fmt.Errorf("encode audit entry: %w", err)
	}
	if _, err := l.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("write audit log: %w", err)
	}
	return nil
}

// Close closes the file.
func (l *Log) Close() error { return l.f.Close() }

func lastLineHash(f *os.File) (string, error) {
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("stat audit log: %w", err)
	}
	if st.Size() == 0 {
		return "", nil
	}
	n := min(st.Size(), tailRead)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, st.Size()-n); err != nil && err != io.EOF {
		return "", fmt.Errorf("read audit log tail: %w", err)
	}
	buf = bytes.TrimRight(buf, "\n")
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[i+1:]
	} else if n < st.Size() {
		return "", fmt.Errorf("audit log's last line is over %d bytes: the file was not written by mcpsandbox; move it aside", tailRead)
	}
	var last Entry
	if err := json.Unmarshal(buf, &last); err != nil || last.Hash == "" {
		return "", fmt.Errorf("audit log's last line is not an mcpsandbox entry: move the file aside (or run `mcpsandbox audit verify` on it)")
	}
	return last.Hash, nil
}

// VerifyReport is the outcome of Verify.
type VerifyReport struct {
	Lines int
	Head  string // hash of the last line: record it to detect later truncation
}

// Verify checks the chain of the log read from r. It returns the line number of the first
// break in its error.
func Verify(r io.Reader) (VerifyReport, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), tailRead*2)
	var rep VerifyReport
	prev := ""
	for sc.Scan() {
		rep.Lines++
		line := sc.Bytes()
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			return rep, fmt.Errorf("line %d: not an audit entry: %w", rep.Lines, err)
		}
		if e.Prev != prev {
			return rep, fmt.Errorf("line %d: chain broken: it names previous hash %.12s…, but line %d has %.12s… (a line was removed or inserted here)", rep.Lines, e.Prev, rep.Lines-1, prev)
		}
		stored := e.Hash
		if _, err := e.seal(); err != nil || e.Hash != stored {
			return rep, fmt.Errorf("line %d: its content does not match its hash (the line was edited)", rep.Lines)
		}
		prev = stored
	}
	if err := sc.Err(); err != nil {
		return rep, fmt.Errorf("read audit log: %w", err)
	}
	rep.Head = prev
	return rep, nil
}
