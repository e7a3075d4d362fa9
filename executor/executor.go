// Package executor is the contract between serve and the schemes, in the shape of
// database/sql/driver: a scheme implements Executor and its Tools, serve hands each call a Call
// and renders the Result (or the Refusal) it gets back. It holds only the contract's types and
// the helpers every executor shares (DecodeArgs, CapBuffer, Refuse), so the harness, verify and
// the schemes speak of results without importing the MCP server.
package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Executor is what each scheme implements.
type Executor interface {
	// Tools lists the tools this scheme exposes; they are registered as given.
	Tools() []Tool
	// Layers reports which isolation layers are in force on this host, for --check and verify.
	Layers() []Layer
	// Ready blocks until calls can run (start-up probes finish) and says why they cannot. serve
	// answers initialize and tools/list meanwhile, and stops with this error if it is not nil.
	Ready() error
	// Close releases what the executor holds (pools, sandboxes).
	Close() error
}

// Tool is one MCP tool backed by an executor.
type Tool struct {
	Name        string
	Title       string
	Description string
	InputSchema map[string]any
	Annotations *mcp.ToolAnnotations
	// Run executes one call. It must stop and reap everything it started when ctx is done, and
	// return a *Refusal for calls the policy forbids.
	Run func(ctx context.Context, c Call) (*Result, error)
}

// Call is what the framework hands an executor.
type Call struct {
	Args      json.RawMessage
	Timeout   time.Duration // already applied to ctx; given for rlimits and messages
	MaxOutput int           // per stream
	// Session is the MCP session the call belongs to: executors that keep state per session
	// key it by this, and one session never reaches another's.
	Session string
}

// Result is the structured output every tool returns.
type Result struct {
	ExitCode   int    `json:"exit_code" jsonschema:"exit status; 128+N when killed by signal N"`
	Stdout     string `json:"stdout" jsonschema:"standard output, capped at limits.max_output_bytes"`
	Stderr     string `json:"stderr" jsonschema:"standard error, capped at limits.max_output_bytes"`
	Truncated  bool   `json:"truncated" jsonschema:"output beyond limits.max_output_bytes per stream was dropped"`
	TimedOut   bool   `json:"timed_out" jsonschema:"the call hit limits.timeout and everything it started was killed"`
	DurationMS int64  `json:"duration_ms" jsonschema:"wall-clock time of the call in milliseconds"`
	// Workspace is what the call's writes did to the workspace, when they went through the
	// transactional layer (nil: the call had no layer).
	Workspace *WorkspaceChanges `json:"workspace,omitempty" jsonschema:"what the call's writes did to the workspace: they land in a private layer and reach it only after serve checks each"`
	// File, Entries and Images are the file tools' results and a call's pictures (FileTools).
	File        *FileResult `json:"file,omitempty" jsonschema:"what write_file or read_file did: the file's path, size, sha256, and what read_file read"`
	Entries     []FileEntry `json:"entries,omitempty" jsonschema:"what list_files found"`
	EntriesMore int         `json:"entries_more,omitempty" jsonschema:"entries past the first 1000, counted"`
	Images      []Image     `json:"images,omitempty" jsonschema:"pictures the program made; each one sent is also an image in the result's content"`
	// EgressDenied names the call's connections serve's egress proxy refused, each with its rule
	// and fix (at most MaxEgressDenied; the rest counted in EgressDeniedMore): an HTTPS client
	// shows only "CONNECT tunnel failed, response 403".
	EgressDenied     []string `json:"egress_denied,omitempty" jsonschema:"connections the egress proxy refused during the call, each with the rule and how to allow it"`
	EgressDeniedMore int      `json:"egress_denied_more,omitempty" jsonschema:"refusals past those listed, counted"`
	// Timeout is the limit the call ran under when a tool's own timeout argument shortened the
	// policy's (0: limits.timeout); for the text rendering only.
	Timeout time.Duration `json:"-"`
}

// MaxEgressDenied bounds the refusals a result names (Result.EgressDenied).
const MaxEgressDenied = 3

// WorkspaceChanges reports a call's transactional layer: what reached the workspace and what
// did not, and why.
type WorkspaceChanges struct {
	Committed int   `json:"committed" jsonschema:"files, directories, links and deletions applied to the workspace"`
	Bytes     int64 `json:"bytes" jsonschema:"bytes of file content written to the workspace"`
	// Deleted counts the deletions among Committed, listed or not: a deletion of a tracked file
	// is what a reviewer looks for first (trial37 F8).
	Deleted int `json:"deleted,omitempty" jsonschema:"deletions among the changes applied"`
	// Applied names the changes applied, deletions first, then files and links written, then
	// directories made, each in the commit's order; AppliedMore counts the rest
	// (len(Applied) + AppliedMore = Committed).
	Applied     []AppliedChange `json:"applied,omitempty" jsonschema:"the changes applied: deletions first, then files and links written, then directories made"`
	AppliedMore int             `json:"applied_more,omitempty" jsonschema:"changes applied past the first 1000 listed, counted"`
	Refused     []RefusedChange `json:"refused,omitempty" jsonschema:"changes not applied, each with the rule that refused it"`
	// RefusedMore counts the refusals past the list's bound.
	RefusedMore int `json:"refused_more,omitempty" jsonschema:"refusals past the first 1000, counted"`
	// Restored lists what the call changed and wrote back though it was gone from the workspace
	// when the call ended, where serve could not tell another writer's deletion or rename from
	// the call's own move (a serve that is not root: no file handles in its user namespace).
	Restored     []string `json:"restored,omitempty" jsonschema:"paths the call changed that were gone from the workspace when it ended, written back: another writer may have deleted or renamed them meanwhile, which serve could not tell from the call's own move"`
	RestoredMore int      `json:"restored_more,omitempty" jsonschema:"restored paths past the first 1000, counted"`
	// Kept is the directory holding the refused files' content for review (KeptFiles of them;
	// NotKept more were past its bound): trial38 F3.
	Kept      string `json:"kept,omitempty" jsonschema:"the directory where the refused files' content is kept for review (not applied)"`
	KeptFiles int    `json:"kept_files,omitempty" jsonschema:"refused files whose content is kept"`
	NotKept   int    `json:"not_kept,omitempty" jsonschema:"refused files whose content was not kept (past the bound)"`
	// NotKeptWhy says which cause kept NotKept files out: the call's bound, the store, a copy
	// (trial49 F7).
	NotKeptWhy string `json:"not_kept_why,omitempty" jsonschema:"why the refused files not kept were not: the call's bound, the store (its path), or a copy that failed"`
	// Discarded says why none of the call's writes were applied (it timed out, was cancelled).
	Discarded string `json:"discarded,omitempty" jsonschema:"why none of the call's writes were applied"`
}

// ConflictWhy begins the reason of a change refused because another writer changed its path in
// the workspace after the call started (the commit's conflict rule).
const ConflictWhy = "changed in the workspace by another writer (another session's call or write_file, another serve, the user) after this call started; "

// LostToConflict says whether none of the call's changes reached the workspace and at least one
// was refused as a conflict: the call did not do what was asked, and trying again (on the other
// writer's version) may (trial40 F11). One whose changes were only refused by the protect rules
// is not: those are a program's side writes (a __pycache__ beside a protected server) as often
// as its purpose.
func (w *WorkspaceChanges) LostToConflict() bool {
	if w == nil || w.Committed > 0 {
		return false
	}
	for _, r := range w.Refused {
		if strings.HasPrefix(r.Why, ConflictWhy) {
			return true
		}
	}
	return false
}

// Recovery is a commit a serve died in (SIGKILL, the OOM killer) that this serve finished at its
// start: what it applied, or why it could not. The client whose call it was got no answer.
type Recovery struct {
	Call    string    // the dead call's id in the audit log ("" when its journal did not name it)
	PID     int       // the serve that died
	Since   time.Time // when its call began
	Changes *WorkspaceChanges
	Err     string // why it could not be finished ("": it was); tried again at the next start
}

// Recoverer is an executor that finishes such commits at its start. serve audits each once Ready
// has returned: Recovered hands them over, once.
type Recoverer interface{ Recovered() []Recovery }

// AppliedChange is one change the commit applied to the workspace.
type AppliedChange struct {
	Op     string `json:"op" jsonschema:"delete (a file, link or directory with what was in it), write (a file), link (a symbolic link) or mkdir"`
	Path   string `json:"path" jsonschema:"the path in the workspace"`
	Bytes  int64  `json:"bytes,omitempty" jsonschema:"bytes written: a file's content, a link's target"`
	SHA256 string `json:"sha256,omitempty" jsonschema:"sha256 of a written file's content"`
}

// Ops of an AppliedChange.
const (
	OpDelete = "delete"
	OpWrite  = "write"
	OpLink   = "link"
	OpMkdir  = "mkdir"
)

// RefusedChange is one change the commit refused.
type RefusedChange struct {
	Path string `json:"path" jsonschema:"the path in the workspace"`
	Why  string `json:"why" jsonschema:"the rule that refused it"`
}

// Layer is one isolation layer and whether it is in force.
type Layer struct {
	Name   string `json:"name"`
	Active bool   `json:"active"`
	Detail string `json:"detail"`
	// NotNeeded marks a layer that is off because this host does not need it (a user
	// namespace when serve is root): not a gap.
	NotNeeded bool `json:"not_needed,omitempty"`
	// Off says why a layer that is not in force is off (one of the Off constants), so advice
	// about it can be true: "" is a layer serve looked for in force and did not find.
	Off string `json:"off,omitempty"`
}

// UnmetError is a Ready error about serve's environment here, not about the sandbox: what serve
// lacks before it can start (e2b's API key). The layers are what the policy gets once it is met,
// so `serve --check --json` still reports them, with this as "not_ready", and explain explains
// the policy with it as a line of its own (trial37 F6: explain refused an e2b policy for a key
// it does not need).
type UnmetError struct {
	Until string // what must hold for serve to start, e.g. "$E2B_API_KEY is set"
	Err   error  // the reason and its fix
}

func (e *UnmetError) Error() string { return e.Err.Error() }
func (e *UnmetError) Unwrap() error { return e.Err }

// Why a layer is not in force (Layer.Off).
const (
	// OffUnavailable: this host or kernel lacks what the layer needs (a Landlock ABI, a
	// namespace, overlayfs); Detail says what.
	OffUnavailable = "unavailable"
	// OffByPolicy: the policy turns the layer off (network = true, say); Detail names the setting.
	OffByPolicy = "policy"
	// OffNotProvided: the scheme does not enforce this at all, on any host; Detail says what
	// stands in.
	OffNotProvided = "not provided"
)

// ToolError is a call that ran and failed the way its tool reports failures (run_code's code
// raised an exception): the client gets the error's text and the result, marked isError.
type ToolError interface {
	error
	ToolResult() *Result
}

// WorkspaceChecker is implemented by executors whose calls write a workspace on serve's host:
// WorkspaceUnwritable measures, for the user the calls and the file tools run as, whether they
// may create files there, and says why not and what lets them ("" and "": they may). serve's
// start log and --check say it, so a workspace the policy makes writable is not reported
// writable when every write will fail (trial48 F2).
type WorkspaceChecker interface {
	WorkspaceUnwritable() (why, fix string)
}

// SessionEnder is implemented by executors that keep state per MCP session (a sandbox reused
// for a session's calls): EndSession is called once the session is over.
type SessionEnder interface {
	EndSession(id string)
}

// Refusal is a call the policy forbids; Rule names the policy key that refused it.
type Refusal struct {
	Rule   string
	Reason string
}

func (r *Refusal) Error() string { return fmt.Sprintf("refused by rule %s: %s", r.Rule, r.Reason) }

// Refuse builds a Refusal.
func Refuse(rule, format string, args ...any) *Refusal {
	return &Refusal{Rule: rule, Reason: fmt.Sprintf(format, args...)}
}

// DecodeArgs decodes tool arguments strictly: unknown fields are a refusal, not silently ignored.
func DecodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if k, want := inexactKey(raw, argNames(v)); k != "" {
		// encoding/json matches names without regard to case (and folds ſ to s, K to k): an
		// argument runs under the name the tool knows, but the audit keeps the one sent.
		return Refuse("tool.arguments", "argument %q is not a name this tool takes: names are matched exactly (did you mean %q?)", k, want)
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return Refuse("tool.arguments", "argument %q must be %s, not a JSON %s (see the tool's input schema)", te.Field, jsonKind(te.Type), te.Value)
		}
		if errors.As(err, &te) && !mutated("args-go-words") {
			// the arguments as a whole: the error named the tool's Go struct (atk48b F5)
			return Refuse("tool.arguments", "arguments must be a JSON object of the tool's input schema, not a JSON %s", te.Value)
		}
		why := strings.TrimPrefix(err.Error(), "json: ")
		if strings.HasPrefix(why, "unknown field ") {
			if names := argNames(v); len(names) > 0 {
				why += " (this tool takes: " + strings.Join(names, ", ") + ")"
			}
		}
		return Refuse("tool.arguments", "arguments do not match the tool's schema: %s", why)
	}
	return nil
}

// inexactKey is the first top-level key of raw that is none of names but equal to one of them
// under case folding, and that name ("" when every key is exact, or raw is not an object).
func inexactKey(raw json.RawMessage, names []string) (key, want string) {
	if len(names) == 0 || mutated("args-key-fold") {
		return "", ""
	}
	return InexactKey(raw, names)
}

// InexactKey is the first top-level key of raw that is none of names but equal to one of them
// under Unicode case folding, and that name ("" when none): what Go's encoding/json reads as
// the name and a parser reading keys as written does not. It decodes no value.
func InexactKey(raw json.RawMessage, names []string) (key, want string) {
	for _, k := range topKeys(raw) {
		if slices.Contains(names, k) {
			continue
		}
		for _, n := range names {
			if strings.EqualFold(k, n) {
				return k, n
			}
		}
	}
	return "", ""
}

// topKeys are the top-level keys of the JSON object raw, decoded, found in one pass that
// decodes no value (write_file's content may be megabytes). raw not an object: none; not JSON:
// what it finds (the decode that follows says what is wrong).
func topKeys(raw []byte) []string {
	var keys []string
	depth, object, expectKey := 0, false, false
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			j := i + 1
			for ; j < len(raw) && raw[j] != '"'; j++ {
				if raw[j] == '\\' {
					j++
				}
			}
			if j >= len(raw) {
				return keys
			}
			var k string
			if expectKey && json.Unmarshal(raw[i:j+1], &k) == nil {
				keys = append(keys, k)
			}
			expectKey, i = false, j
		case '{', '[':
			depth++
			if depth == 1 {
				object = raw[i] == '{'
			}
			expectKey = depth == 1 && object
		case '}', ']':
			depth--
			expectKey = false
		case ',':
			expectKey = depth == 1 && object
		}
	}
	return keys
}

// argNames are the argument names a tool's arguments struct takes (its JSON names), for a
// refusal of an unknown one: a client that sent "command" to a tool taking "script" learns it.
func argNames(v any) []string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
			continue
		case name == "" && f.Anonymous:
			names = append(names, argNames(reflect.New(f.Type).Interface())...) // its fields are the struct's
			continue
		case name == "":
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

// CapBuffer keeps the first Limit bytes written and counts the rest. Writes never fail, so a
// chatty command is not stopped by EPIPE but its excess output is dropped.
type CapBuffer struct {
	Limit   int
	mu      sync.Mutex
	buf     []byte
	dropped int64
}

func (c *CapBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.Limit - len(c.buf)
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		c.buf = append(c.buf, p[:room]...)
	}
	c.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

// copyBufs are ReadFrom's read buffers: io.Copy into a CapBuffer from a pipe would otherwise
// allocate a 32 KiB buffer per stream per call (two thirds of an allowlist call's allocations).
var copyBufs = sync.Pool{New: func() any { return new([16 << 10]byte) }}

// ReadFrom reads r to its end (or its first error) through Write, with a pooled buffer: io.Copy
// uses it in place of a buffer of its own.
func (c *CapBuffer) ReadFrom(r io.Reader) (int64, error) {
	b := copyBufs.Get().(*[16 << 10]byte)
	defer copyBufs.Put(b)
	var n int64
	for {
		k, err := r.Read(b[:])
		if k > 0 {
			c.Write(b[:k])
			n += int64(k)
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// String returns the kept bytes as valid UTF-8.
func (c *CapBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.ToValidUTF8(string(c.buf), "\uFFFD")
}

// Dropped is how many bytes were discarded.
func (c *CapBuffer) Dropped() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

// jsonKind names a Go type the way the tool's JSON schema does.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "of another type"
}

// callIDKey carries a call's id in the audit log on the context its tool runs with.
type callIDKey struct{}

// WithCallID is ctx carrying the id serve's audit log gives the call (its "started" line's): a
// commit the serve dies in names it, so the next serve's "recovered" line closes that call.
func WithCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

// CallID is the call's id WithCallID put on ctx ("" when none did).
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}
