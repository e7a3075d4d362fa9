// Package audit writes the tamper-evident call log: one JSON line per call, each carrying the
// sha256 of the line before it, so editing or deleting a line breaks the chain at that point.
//
// # No content can make the log unwritable
//
// Every line Append writes is at most MaxLine bytes, whatever the entry holds: the bound is
// applied to the encoded line, after secrets are redacted (so a secret cut by the clip cannot
// come back in part). A string field whose encoding is too long (over 256 bytes for the short
// fields, 4 KiB for reason) is cut at a character boundary, and arguments get what is left of
// the line; each clipped field is named in the entry's "clipped" list with the byte length and
// sha256 of its whole (redacted) value, so a copy kept elsewhere can still be matched. Invalid
// UTF-8 becomes U+FFFD, and arguments that are not JSON are logged as a JSON string.
//
// Append finds the chain's head from the file's last line, and no last line can stop it: if
// that line is not an mcpsandbox entry (hand-appended, malformed, over-long, cut short by a
// crash), Append first writes a marker entry (tool "audit", decision "foreign", rule
// "audit.foreign_line") whose prev is the sha256 of that line's raw bytes, then the entry.
// Verify reports every line it cannot account for, with its number, and fails.
//
// Where Append reads the tail afresh (a new serve, a size another writer left, a new file), it
// also checks that the file still holds the line serve last wrote where serve's anchor says
// (Anchor). If it does not (the file is shorter, or another line ends there: lines removed from
// its end, the file replaced), Append first writes a marker entry (tool "audit", decision "cut",
// rule "audit.cut", "cut" naming the anchored head and length and what was found) chained on
// from the file's last line, so the cut stays in the log after the anchor moves on; Verify
// reports every such marker and fails. An empty file is no cut (a rotation leaves one too): the
// new chain's first line names the anchored head ("continues").
//
// If the file at the log's path is no longer the one open (moved aside, deleted, replaced),
// the next Append opens the path again and starts a new chain there: a log made writable
// again is used again without a restart. Appends hold an exclusive lock on the file, so
// serves sharing one log keep one chain; an append waits at most LockWait for the lock (and
// for appends of this Log queued before it), then fails.
//
// The file must be a regular file owned by serve's effective user with a single name: it is
// opened with O_NOFOLLOW|O_NONBLOCK (its own name must not be a symbolic link; a parent
// directory may be) and checked at every append, so a FIFO, a device, a link into another
// file or another user's file makes appends fail instead of sending the lines elsewhere.
//
// Secrets are redacted from the decoded arguments (strings, keys, numbers), which are then
// encoded again, so a JSON escape cannot hide one; arguments over MaxJSONValues or
// MaxJSONDepth are not decoded and not logged, only their length and sha256.
//
// # Failure mode: no call runs unaudited
//
// serve appends a "started" entry (same call id as the outcome entry that follows) before a
// call runs. If that append fails, the call is refused without running, with an error naming
// audit.path; if only the outcome append fails, the call's result is withheld. A "started"
// entry without an outcome is a call whose serve died while running it; Verify counts them.
package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
	"github.com/mcpsandbox/mcpsandbox/internal/visible"
	"github.com/mcpsandbox/mcpsandbox/internal/xdg"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Decisions serve writes besides a call's outcome ("ran", "refused", "error", "cancelled").
const (
	DecisionStarted = "started" // a call is about to run: written before it runs
	DecisionForeign = "foreign" // marker: the line before this one is not an mcpsandbox entry
	// DecisionCut: marker: the log no longer held the line serve last wrote where serve's anchor
	// says (lines removed from its end, the file replaced); Cut says what was found.
	DecisionCut = "cut"
	// DecisionRecovered: a commit a dead serve left (its call's outcome line missing) was
	// finished by this serve at its start; Tool is RecoveryTool, Workspace what it applied.
	DecisionRecovered = "recovered"
	MarkerTool        = "audit"     // the tool of marker entries
	RecoveryTool      = "workspace" // the tool of recovered entries
	RuleForeign       = "audit.foreign_line"
	RuleCut           = "audit.cut"
)

// MaxLine is the most bytes one line of the log takes, newline included. Every field is
// clipped so the encoded line fits (see the package comment).
const MaxLine = 16 << 10

const (
	maxShortField = 256     // encoded bytes of time, server, session, tool, decision, rule, policy_hash, call
	maxReason     = 4 << 10 // encoded bytes of reason
	maxClips      = 4       // clip records a caller may pass in; the log's own come on top
	// maxParse is the longest line Append and Verify try to read as an entry: lines written
	// before MaxLine existed could be longer than MaxLine. Longer lines are foreign.
	maxParse = 1 << 20
	tailRead = 64 << 10
)

// Entry is one audit line. Client is the session's client as its initialize named it (name and
// version), PolicyPath the policy file the call ran under and WorkDir the host directory that is
// its workspace (trial38 F2: a line could not say which AI ran a call, nor in which repository);
// Origin is OriginInitCheck on a call of init's own check (it only sorts: the line keeps every
// other field). Each is omitted when empty, so lines written before them verify as they did.
type Entry struct {
	Time       string           `json:"time"`
	Server     string           `json:"server"`
	PID        int              `json:"pid"`
	Session    string           `json:"session,omitempty"` // the MCP session the call came in
	Call       string           `json:"call,omitempty"`    // the call's id: links its "started" entry to its outcome
	Client     string           `json:"client,omitempty"`
	Origin     string           `json:"origin,omitempty"`
	PolicyPath string           `json:"policy_path,omitempty"`
	WorkDir    string           `json:"workspace_dir,omitempty"`
	Tool       string           `json:"tool"`
	Arguments  json.RawMessage  `json:"arguments"`
	Decision   string           `json:"decision"` // "started", "ran", "refused", "error", "cancelled"; "foreign" (marker)
	Rule       string           `json:"rule,omitempty"`
	Reason     string           `json:"reason,omitempty"`
	ExitCode   *int             `json:"exit_code,omitempty"`
	DurationMS int64            `json:"duration_ms"`
	Truncated  bool             `json:"truncated"`
	TimedOut   bool             `json:"timed_out"`
	PolicyHash string           `json:"policy_hash"`
	Files      []FileRecord     `json:"files,omitempty"`     // files the call wrote or read, pictures it returned
	Workspace  *WorkspaceRecord `json:"workspace,omitempty"` // what the call's writes did to the workspace
	Clipped    []Clip           `json:"clipped,omitempty"`   // fields cut to keep the line within MaxLine
	Continues  *ChainLink       `json:"continues,omitempty"` // first line of a new chain: the head serve last wrote at this path
	Cut        *CutRecord       `json:"cut,omitempty"`       // a cut marker's: what the anchor named, what was there
	Prev       string           `json:"prev"`                // hash of the previous entry; "" for the first
	Hash       string           `json:"hash"`                // sha256 of this entry encoded with hash = ""
}

// FileRecord is one file a call moved in or out of its sandbox: write_file, read_file, or a
// picture returned as image content ("image").
type FileRecord struct {
	Op     string `json:"op"`
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`  // the bytes SHA256 is of
	SHA256 string `json:"sha256"` // of the bytes written or read
	// FileBytes is the file's size when a read took only its first Bytes (max_bytes): the hash is
	// of those, not of the file (trial46 F3: the file's size beside a prefix's hash).
	FileBytes int64 `json:"file_bytes,omitempty"`
}

// WorkspaceRecord counts what a call's writes did to the workspace through its transactional
// layer: applied, refused (a conflict, a protected name, …), written back though gone from the
// workspace, or discarded whole (trial27: a refused write left no trace in the audit). The
// applied changes are named too, deletions first, at most maxApplied, the rest counted in
// AppliedMore (trial37 F8: a call's deletion of a tracked file showed as "committed":1); the
// refused and restored paths are in the call's result. New fields are omitted when empty, so
// lines written before them encode, and verify, as they did.
type WorkspaceRecord struct {
	Committed   int             `json:"committed"`
	Bytes       int64           `json:"bytes"`
	Refused     int             `json:"refused,omitempty"`
	Restored    int             `json:"restored,omitempty"`
	Discarded   bool            `json:"discarded,omitempty"`
	Deleted     int             `json:"deleted,omitempty"` // deletions among Committed
	Applied     []AppliedRecord `json:"applied,omitempty"`
	AppliedMore int             `json:"applied_more,omitempty"` // applied changes not named
	// RefusedChanges names the refused changes with the rule that refused each, at most
	// maxApplied; the rest are counted in RefusedMore (trial38 F3).
	RefusedChanges []RefusedRecord `json:"refused_changes,omitempty"`
	RefusedMore    int             `json:"refused_more,omitempty"`
	// Kept is the directory serve copied the refused files' content into, for review.
	Kept string `json:"kept,omitempty"`
}

// RefusedRecord is one change a call's commit refused: its path and why.
type RefusedRecord struct {
	Path string `json:"path"`
	Why  string `json:"why"`
}

// OriginInitCheck is the origin of the calls of init's check of a server it configured.
const OriginInitCheck = "init-check"

// AppliedRecord is one change a call's commit applied to the workspace: op delete, write,
// link or mkdir; the bytes written (a file's content, a link's target) and a written file's
// sha256.
type AppliedRecord struct {
	Op     string `json:"op"`
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// ChainLink is what the first line of a new chain (a log rotated, emptied or deleted since)
// names of the chain before it at the same path, from serve's anchor (see Anchor): the hash
// of the last line written there and the byte length the log had then (trial38 F5).
type ChainLink struct {
	Head  string `json:"head"`
	Bytes int64  `json:"bytes"`
}

// Clip records a field cut short: its name, and the byte length and sha256 of the whole value
// (after redaction).
type Clip struct {
	Field  string `json:"field"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// NewClip describes value as clipped field.
func NewClip(field string, value []byte) Clip {
	sum := sha256.Sum256(value)
	return Clip{Field: field, Bytes: int64(len(value)), SHA256: hex.EncodeToString(sum[:])}
}

// seal computes the entry's own hash: edits to any line, the last one included, show unless the
// editor recomputes every hash after it (the head hash that verify prints catches that).
func (e *Entry) seal() ([]byte, error) { return e.sealWith(marshal) }

// sealWith is seal with the encoder enc: marshal, or json.Marshal for a line written before
// marshal escaped what a terminal does not print (checkEntry).
func (e *Entry) sealWith(enc func(any) ([]byte, error)) ([]byte, error) {
	e.Hash = ""
	b, err := enc(e)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	e.Hash = hex.EncodeToString(sum[:])
	return enc(e)
}

// Log appends entries. It is safe for concurrent use, and across processes: every append holds
// an exclusive flock, so two servers sharing one file keep one unbroken chain.
type Log struct {
	// turn is held by the append in progress: a channel, not a mutex, so that appends queued
	// behind one waiting for the file lock give up at their own deadline (LockWait).
	turn       chan struct{}
	path       string
	f          *os.File // nil: open the path at the next Append
	closed     bool
	redact     *strings.Replacer
	hasSecrets bool // the environment has secret-looking values to redact
	// The chain head this Log last wrote, and the file's size after it: if the size is the
	// same at the next append, nobody has written since and the tail need not be read.
	headHash string
	headSize int64
	// reservedTo is the end of the space this Log last reserved past the file's end
	// (Reserve): a started line is written only with room for outcomes behind it.
	reservedTo   int64
	reservedFile *os.File // the file reservedTo is of (the log may be opened anew)
	// lastEnd is the file's size after this Log's last append: a smaller size at the next one
	// is a truncation in place (logrotate's copytruncate), which freed the reserve with it.
	lastEnd int64
	// running are the calls whose "started" line this Log wrote and whose outcome it has not:
	// only their outcomes may use the reserve (attack round atk32, F3).
	running map[string]struct{}
	// unreserved: the log's file system cannot allocate ahead (ReserveNote)
	unreserved bool
	// anchor is the open anchor file (Anchor), opened for the log file anchorFile
	anchor     *os.File
	anchorFile *os.File
	// policyPath, workDir and clients fill the lines whose writer does not know them (SetUp)
	policyPath, workDir string
	clients             map[string]string // session: its client, as its lines named it
}

// maxClients bounds the sessions whose client a Log remembers (SetUp): past it the map starts
// again, and an egress line of a session forgotten names no client.
const maxClients = 4096

// SetUp makes the lines this Log writes name serve's policy file and workspace directory, and a
// session's client, when their writer did not: the egress proxy's decisions carried neither
// while the call lines did (trial38 F2's fields; a session's client is the one its call lines
// named last). Lines that name them keep theirs.
func (l *Log) SetUp(policyPath, workDir string) {
	l.turn <- struct{}{}
	defer func() { <-l.turn }()
	l.policyPath, l.workDir = policyPath, workDir
}

// fill puts SetUp's values on e where e has none (under the Log's turn).
func (l *Log) fill(e *Entry) {
	if mutated("audit-egress-unstamped") {
		return
	}
	if e.PolicyPath == "" {
		e.PolicyPath = l.policyPath
	}
	if e.WorkDir == "" {
		e.WorkDir = l.workDir
	}
	switch {
	case e.Session == "":
	case e.Client != "":
		if l.clients == nil || len(l.clients) >= maxClients {
			l.clients = map[string]string{}
		}
		l.clients[e.Session] = e.Client
	default:
		e.Client = l.clients[e.Session]
	}
}

// Reserve is the space the log keeps allocated past its end (fallocate, size unchanged; taken
// two at a time, so between Reserve and twice that): the outcome lines of max_concurrent's most
// calls (256) at MaxLine each. Every line but a running call's outcome is written only when that
// space is there after it, so a disk that fills while calls run cannot leave a call that ran with
// no outcome line, or a torn one (attack round atk31, F3), and lines a client makes at will
// (refused calls, egress decisions) cannot use that room (atk32, F3).
const Reserve = 256 * MaxLine

// DefaultPath is $XDG_STATE_HOME/mcpsandbox/audit.jsonl (or ~/.local/state/...).
func DefaultPath() (string, error) {
	if xdg.Dir("XDG_STATE_HOME") != "" {
		return policy.DefaultAuditPath(""), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the audit log's default place: %w (set audit.path in the policy)", err)
	}
	return policy.DefaultAuditPath(home), nil
}

// Open opens (creating 0600, parents 0700) the log at path. env is the server's environment:
// values of secret-looking variables are redacted from everything logged.
func Open(path string, env []string) (*Log, error) {
	f, err := openPath(path)
	if err != nil {
		return nil, err
	}
	r, n := secretRedactor(env)
	// one byte asked at the start (a block held past an empty file's end): whether room can be
	// held at all is known before the first call, for serve's start log
	unreserved := errors.Is(reserveSpace(f, 0, 1), errNoFallocate)
	return &Log{turn: make(chan struct{}, 1), path: path, f: f, redact: r, hasSecrets: n > 0, unreserved: unreserved}, nil
}

func openPath(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create audit log directory: %w (set audit.path to a writable place)", err)
	}
	flags := os.O_RDWR | os.O_APPEND | os.O_CREATE
	if !mutated("audit-file-type") {
		flags |= openFlags
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		if isLinkErr(err) {
			return nil, fmt.Errorf("open audit log %s: it is a symbolic link: the log's own name must not be a link "+
				"(a linked parent directory is fine); remove the link or set audit.path to the file itself", path)
		}
		return nil, fmt.Errorf("open audit log: %w (set audit.path to a writable place)", err)
	}
	st, err := f.Stat()
	if err == nil {
		err = checkPathFile(path, f, st)
	}
	if err == nil {
		// held to the policy file's rule (atk35 F5): a log another user may delete through a
		// directory above it is begun again by the next line, a fresh chain that reads intact
		err = policy.CheckAuditPlaceSafe(path)
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// checkPathFile refuses a log that is not a regular file owned by serve's user with one name
// (see checkFile): lines written there could go nowhere, block, or land in someone else's file.
func checkPathFile(path string, f *os.File, st os.FileInfo) error {
	if mutated("audit-file-type") {
		return nil
	}
	if err := checkFile(f, st); err != nil {
		return fmt.Errorf("the audit log %s cannot be used: %w; make audit.path a regular file of serve's user with a single name "+
			"(move what is there aside: serve creates a new log)", path, err)
	}
	return nil
}

// Path is the log's file name.
func (l *Log) Path() string { return l.path }

var secretName = lazy.Regexp(`(?i)(KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|SESSION|COOKIE|PRIVATE)`)

// publicName: variables secretName matches whose values a desktop or an agent sets and are no
// secret (attack round atk36, F3): DESKTOP_SESSION=ubuntu and XDG_SESSION_TYPE=wayland, set in
// every client started from an Ubuntu desktop, made the log write "[redacted:DESKTOP_SESSION]"
// for each "ubuntu" a call named, so which file a call deleted could not be read from it, and a
// client knowing the rule could hide a name on purpose.
var publicName = lazy.Regexp(`^(?i:DESKTOP_SESSION|GDMSESSION|SESSION_MANAGER|XDG_SESSION_[A-Z0-9_]+|[A-Z0-9_]*_SESSION_(TYPE|DESKTOP|CLASS|VERSION)|` +
	`XAUTHORITY|SSH_AUTH_SOCK|GNOME_KEYRING_CONTROL|GPG_AGENT_INFO|DBUS_SESSION_BUS_ADDRESS)$`)

// secretRedactor replaces the values of secret-looking variables (6+ characters) with a marker.
// Longest values first, so a secret that contains another is replaced whole. Not redacted: the
// variables publicName lists, and a value that is the absolute path of a file or directory that
// exists (GOOGLE_APPLICATION_CREDENTIALS=/home/u/key.json says where a secret is, not what it
// is: redacting it hid that a call read that file).
func secretRedactor(env []string) (*strings.Replacer, int) {
	type kv struct{ k, v string }
	var secrets []kv
	for _, e := range env {
		k, v, ok := strings.Cut(e, "=")
		if !ok || len(v) < 6 || !secretName().MatchString(k) {
			continue
		}
		if !mutated("audit-redacts-public-values") && (publicName().MatchString(k) || existingPath(v)) {
			continue
		}
		secrets = append(secrets, kv{k, v})
	}
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i].v) > len(secrets[j].v) })
	var pairs []string
	for _, s := range secrets {
		pairs = append(pairs, s.v, "[redacted:"+s.k+"]")
	}
	return strings.NewReplacer(pairs...), len(secrets)
}

// existingPath: an absolute, clean path with no space or control that names something that exists.
func existingPath(v string) bool {
	if !filepath.IsAbs(v) || filepath.Clean(v) != v || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return false
	}
	_, err := os.Lstat(v)
	return err == nil
}

var errClosed = errors.New("the audit log is closed")

// Append writes e, filling Time, PID and Prev. It fails only when the file cannot be opened,
// locked, read or written, never because of what e or the file holds.
func (l *Log) Append(e Entry) error {
	deadline := time.Now().Add(LockWait)
	if err := l.take(deadline); err != nil {
		return err
	}
	defer func() { <-l.turn }()
	if l.closed {
		return errClosed
	}
	f, st, err := l.lockCurrent(deadline)
	if err != nil {
		return err
	}
	defer unlockFile(f)

	e.PID = pid
	if e.Time == "" {
		e.Time = time.Now().UTC().Format(time.RFC3339Nano)
	}
	l.fill(&e)
	out, size, err := l.chainOn(f, st, &e)
	if err != nil {
		return err
	}
	line, err := l.encode(&e)
	if err != nil {
		return err
	}
	out = append(append(out, line...), '\n')
	end := size + int64(len(out))
	_, outcome := l.running[e.Call]
	outcome = outcome && e.Call != "" && e.Decision != DecisionStarted
	// (a truncated log has lost its allocation too, so short below takes the reserve again
	// anyway: this is a second guard, without a mutant of its own since trial38 F5's check)
	truncated := st.Size() < l.lastEnd
	// allocated: another serve sharing the log released the room when it closed (release)
	short := allocated(st) < end+Reserve
	if (end+Reserve > l.reservedTo || l.reservedFile != f || truncated || short) && !mutated("audit-reserve") {
		if err := l.reserve(f, size, int64(len(out))); err != nil {
			if e.Decision == DecisionStarted {
				// no room for its outcome: the call is refused before it runs
				return fmt.Errorf("reserve space in audit log %s for the call's outcome: %w (free space there, or set audit.path)", l.path, err)
			} else if !outcome && !mutated("audit-reserve-shared") {
				// the room left is the running calls' outcomes' (a refused call's line, an egress
				// decision: lines a client makes at will)
				return fmt.Errorf("append to audit log %s: %w: the space left is kept for the outcomes of running calls (free space there, or set audit.path)", l.path, err)
			}
		}
	}
	l.headSize = 0
	if n, err := f.Write(out); err != nil {
		if n > 0 && !mutated("audit-torn-line") {
			// no torn line: the log stays a chain of whole entries
			_ = f.Truncate(st.Size())
		}
		return fmt.Errorf("write audit log %s: %w (free space or fix permissions there, or set audit.path)", l.path, err)
	}
	// The size this append left, from the size under the lock (one fstat less a call): a
	// writer that ignores the lock and appended meanwhile makes the next append's size differ,
	// and that append reads the tail, as it would have.
	l.headHash, l.headSize = e.Hash, size+int64(len(out))
	l.lastEnd = l.headSize
	l.anchorTo(f, e.Hash, l.headSize)
	switch {
	case e.Decision == DecisionStarted && e.Call != "":
		if l.running == nil {
			l.running = map[string]struct{}{}
		}
		l.running[e.Call] = struct{}{}
	case outcome:
		delete(l.running, e.Call)
	}
	return nil
}

// chainOn sets e's prev (and continues, the first line of a new chain) from f's tail, st
// its stat under the lock, and returns the marker lines to write before e (foreign, cut) and
// the file's size (with the newline head ends an unfinished last line with).
func (l *Log) chainOn(f *os.File, st os.FileInfo, e *Entry) (out []byte, size int64, err error) {
	var prev string
	var foreign *foreignLine
	var anchor *Anchor
	var cut *CutRecord
	size = st.Size()
	if l.headSize > 0 && size == l.headSize {
		prev = l.headHash
	} else {
		if prev, foreign, size, err = head(f); err != nil {
			return nil, 0, err
		}
		if mutated("audit-size-unended-line") {
			size = st.Size() // the newline head ended an unfinished line with not counted
		}
		// the tail read afresh (a new serve, another writer, a new file): the anchor is checked
		// where it is moved, else the next line's anchor makes a cut log read whole (atk38b F1)
		anchor, _ = ReadAnchor(l.path)
		if !mutated("audit-anchor-unchecked-at-append") {
			if cut, err = checkAnchor(f, anchor, st.Size(), prev); err != nil {
				return nil, 0, err
			}
		}
	}
	marker := func(m Entry) error {
		m.Time, m.Server, m.PID, m.Tool, m.PolicyHash, m.Prev = e.Time, e.Server, e.PID, MarkerTool, e.PolicyHash, prev
		line, err := l.encode(&m)
		if err != nil {
			return err
		}
		out, prev = append(append(out, line...), '\n'), m.Hash
		return nil
	}
	if foreign != nil {
		prev = foreign.sha
		err = marker(Entry{Decision: DecisionForeign, Rule: RuleForeign,
			Reason: fmt.Sprintf("the line before this one (%d bytes, sha256 %s) is not an mcpsandbox entry (%s): "+
				"this entry chains from that line's raw bytes; run `mcpsandbox audit verify` on %s", foreign.n, foreign.sha, foreign.why, l.path)})
	}
	if cut != nil && err == nil {
		err = marker(Entry{Decision: DecisionCut, Rule: RuleCut, Reason: cut.reason(l.path), Cut: cut})
	}
	if err != nil {
		return nil, 0, err
	}
	e.Prev = prev
	if size == 0 && out == nil {
		e.Continues = l.link(anchor)
	}
	return out, size, nil
}

// link is what a new chain's first line names of the chain before it at this path (serve's
// anchor a): nil when serve has written nothing there before.
func (l *Log) link(a *Anchor) *ChainLink {
	if mutated("audit-chain-link") {
		return nil
	}
	if a != nil && a.Bytes > 0 {
		return &ChainLink{Head: a.Head, Bytes: a.Bytes}
	}
	return nil
}

// anchorTo records the line just written to f (its hash, the log's size after it) in the anchor.
func (l *Log) anchorTo(f *os.File, hash string, size int64) {
	if !mutated("audit-anchor") {
		if l.anchor == nil || l.anchorFile != f {
			// (re)opened with the log: a rotation or a reopen finds the anchor anew
			if l.anchor != nil {
				_ = l.anchor.Close()
			}
			l.anchor, l.anchorFile = openAnchor(l.path), f
		}
		writeAnchor(l.anchor, Anchor{Head: hash, Bytes: size})
	}
}

// reserve holds Reserve to twice that past a line of n bytes about to be written at off (see
// Reserve). Where the file system cannot allocate ahead nothing is held: every line then checks
// that the file system has the room free, and the Log says so (ReserveNote; atk32 N2: the reserve
// was silently absent and recorded as taken).
func (l *Log) reserve(f *os.File, off, n int64) error {
	ahead := int64(2 * Reserve) // two at a time: the next appends need no fallocate
	err := reserveSpace(f, off, n+ahead)
	if err != nil && !errors.Is(err, errNoFallocate) {
		ahead = Reserve // the least every line but an outcome must leave
		err = reserveSpace(f, off, n+ahead)
	}
	switch {
	case err == nil:
		l.reservedTo, l.reservedFile = off+n+ahead, f
	case errors.Is(err, errNoFallocate):
		l.unreserved = true
		if mutated("audit-reserve-statfs") {
			return nil
		}
		return spaceFor(f, n+Reserve)
	}
	return err
}

// release frees the room held past f's end (f locked): a log serve closes, or finds moved aside
// by a rotation, kept its reserve for good (trial38 F5: 8 MiB on disk for a 995-byte rotated
// file, also after serve exited). Another serve sharing the log takes its room again at its next
// append (reserve: the allocated size is checked).
func (l *Log) release(f *os.File) {
	if mutated("audit-reserve-release") {
		return
	}
	st, err := f.Stat()
	if err != nil {
		return
	}
	_ = releaseSpace(f, st.Size())
	if l.reservedFile == f {
		l.reservedFile, l.reservedTo = nil, 0
	}
}

// errNoFallocate is a log whose file system cannot allocate ahead.
var errNoFallocate = errors.New("the file system cannot allocate ahead (no fallocate)")

// ReserveNote is empty when the log holds room for running calls' outcomes, else what a
// user should know: serve logs it at start.
func (l *Log) ReserveNote() string {
	if !l.unreserved {
		return ""
	}
	return fmt.Sprintf("audit log %s: no room can be held for running calls' outcomes there (its file system has no fallocate, "+
		"or this system is not Linux): each line is written when the file system says the room is free, which another "+
		"writer can take meanwhile, so a disk that fills while calls run could leave a call without its outcome line; "+
		"set audit.path on a local Linux file system (ext4, xfs, btrfs, tmpfs) to hold it", l.path)
}

// pid is serve's process id, which every entry names (asked once: it does not change).
var pid = os.Getpid()

// LockWait bounds how long one Append waits for its turn and for the log's file lock: past it
// the append fails (and serve refuses the call, naming audit.path), so a process that holds
// the lock cannot stall every call.
const LockWait = 5 * time.Second

// lockPoll is the pause between two tries of a held file lock.
const lockPoll = 20 * time.Millisecond

// errLockHeld is an append that gave up waiting for the log's lock.
var errLockHeld = errors.New("another process holds the audit log's lock")

// take waits for this Log's turn until deadline.
func (l *Log) take(deadline time.Time) error {
	if mutated("audit-lock-bound") {
		l.turn <- struct{}{}
		return nil
	}
	select {
	case l.turn <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case l.turn <- struct{}{}:
		return nil
	case <-t.C:
		return fmt.Errorf("append to audit log %s: %w (earlier appends waited for it for over %s): "+
			"find the process holding it (e.g. `fuser %s`) or set audit.path", l.path, errLockHeld, LockWait, l.path)
	}
}

// lock takes the file's exclusive lock, trying until deadline.
func (l *Log) lock(f *os.File, deadline time.Time) error {
	if mutated("audit-lock-bound") {
		return lockWait(f)
	}
	for {
		busy, err := tryLock(f)
		if err != nil {
			return err
		}
		if !busy {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w for over %s: find it (e.g. `fuser %s`) or set audit.path", errLockHeld, LockWait, l.path)
		}
		time.Sleep(min(lockPoll, max(time.Until(deadline), time.Millisecond)))
	}
}

// lockCurrent returns the file at l.path, locked: the open one if it still is the file there,
// else the path opened again (a new chain starts in a new file). The file must still be a
// regular file of serve's user with one name (checkFile), at every append.
func (l *Log) lockCurrent(deadline time.Time) (*os.File, os.FileInfo, error) {
	for range 3 {
		if l.f == nil {
			f, err := openPath(l.path)
			if err != nil {
				return nil, nil, err
			}
			l.f = f
		}
		if !mutated("audit-flock") {
			if err := l.lock(l.f, deadline); err != nil {
				return nil, nil, fmt.Errorf("lock audit log %s: %w", l.path, err)
			}
		}
		fst, ferr := l.f.Stat()
		pst, perr := os.Lstat(l.path)
		if ferr == nil && perr == nil && (os.SameFile(fst, pst) || mutated("audit-reopen")) {
			if err := checkPathFile(l.path, l.f, fst); err != nil {
				unlockFile(l.f)
				_ = l.f.Close()
				l.f, l.headSize = nil, 0
				return nil, nil, err
			}
			return l.f, fst, nil
		}
		l.release(l.f) // moved aside (rotated) or deleted: its reserve is not the new file's
		unlockFile(l.f)
		_ = l.f.Close()
		l.f, l.headSize = nil, 0
	}
	return nil, nil, fmt.Errorf("the audit log %s keeps being replaced while serve writes it (set audit.path to a place only you write)", l.path)
}

// Close closes the file; later appends fail.
func (l *Log) Close() error {
	l.turn <- struct{}{}
	defer func() { <-l.turn }()
	l.closed = true
	// the reserve is released only by the last serve writing the log: another's running call
	// needs it for its outcome line on a full disk (attack round atk38b, F4)
	last := false
	if l.anchor == nil && l.f != nil {
		l.anchor = openAnchor(l.path)
	}
	if l.anchor != nil {
		last = soleHolder(l.anchor) || mutated("audit-reserve-release-shared")
		_ = l.anchor.Close()
		l.anchor = nil
	}
	if l.f == nil {
		return nil
	}
	if err := l.lock(l.f, time.Now().Add(LockWait)); err == nil {
		if last {
			l.release(l.f)
		}
		unlockFile(l.f)
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// encode redacts and bounds e, then seals it: the returned line (without its newline) is at
// most MaxLine-1 bytes.
func (l *Log) encode(e *Entry) ([]byte, error) {
	if !mutated("audit-bound") {
		l.bound(e)
	} else {
		e.Reason = l.redact.Replace(e.Reason)
		if len(e.Arguments) > 0 {
			e.Arguments = json.RawMessage(l.redact.Replace(string(e.Arguments)))
		}
	}
	line, err := e.seal()
	if err != nil {
		return nil, fmt.Errorf("encode audit entry: %w", err)
	}
	if len(line) >= MaxLine && !mutated("audit-bound") {
		return nil, fmt.Errorf("encode audit entry: %d bytes, over the %d-byte line bound (a bug: please report it)", len(line), MaxLine)
	}
	return line, nil
}

// bound redacts every field, then clips fields so that the encoded line fits MaxLine.
func (l *Log) bound(e *Entry) {
	var clips []Clip
	for _, c := range e.Clipped { // a caller's own records (a message too long to keep): bounded too
		if len(clips) == maxClips {
			break
		}
		c.Field = clipString(strings.ToValidUTF8(c.Field, "?"), 40)
		c.SHA256 = clipString(strings.ToValidUTF8(c.SHA256, "?"), 66)
		clips = append(clips, c)
	}
	for _, f := range []struct {
		name string
		p    *string
		max  int
	}{
		{"time", &e.Time, maxShortField}, {"server", &e.Server, maxShortField}, {"session", &e.Session, maxShortField},
		{"call", &e.Call, maxShortField}, {"tool", &e.Tool, maxShortField}, {"decision", &e.Decision, maxShortField},
		{"rule", &e.Rule, maxShortField}, {"reason", &e.Reason, maxReason}, {"policy_hash", &e.PolicyHash, maxShortField},
		{"client", &e.Client, maxShortField}, {"origin", &e.Origin, maxShortField},
		{"policy_path", &e.PolicyPath, maxShortField}, {"workspace_dir", &e.WorkDir, maxShortField},
	} {
		v := l.redact.Replace(*f.p)
		s := strings.ToValidUTF8(v, "\uFFFD")
		if s = clipString(s, f.max); s != v { // cut, or its invalid UTF-8 replaced
			clips = append(clips, NewClip(f.name, []byte(v)))
		}
		*f.p = s
	}
	e.Files, clips = l.boundFiles(e.Files, clips)
	var appliedWhole []byte
	e.Workspace, appliedWhole = l.boundApplied(e.Workspace)
	if appliedWhole != nil {
		clips = append(clips, NewClip("workspace.applied", appliedWhole))
	}
	args, whole := l.redactArgs(e.Arguments)
	e.Arguments = nil
	fixed := strings.ToValidUTF8(args, "\uFFFD")
	if args != "" {
		if json.Valid([]byte(fixed)) {
			e.Arguments = json.RawMessage(fixed)
		} else {
			e.Arguments, _ = marshal(fixed) // a string: cannot fail
		}
	}
	e.Clipped = clips
	e.Hash = strings.Repeat("0", 64) // measured as sealed
	if e.Workspace != nil && (len(e.Workspace.Applied) > 0 || len(e.Workspace.RefusedChanges) > 0) {
		clips = trimApplied(e, clips, appliedWhole)
		e.Clipped = clips
	}
	if len(e.Arguments) < MaxLine { // else it cannot fit
		if b, err := marshal(e); err == nil && len(b) < MaxLine {
			if fixed != args || whole != nil { // the logged arguments are not byte for byte the ones given
				e.Clipped = append(clips, argsClip(args, whole))
			}
			e.Clipped = nilIfEmpty(e.Clipped)
			if b, err := marshal(e); err == nil && len(b) < MaxLine {
				return
			}
		}
	}
	// Arguments get what the rest of the line leaves, as a JSON string of their text's start.
	e.Clipped = append(clips, argsClip(args, whole))
	e.Arguments = json.RawMessage(`""`)
	b, _ := marshal(e) // only strings, numbers and compact JSON: cannot fail
	budget := MaxLine - 1 - len(b) + 2
	e.Arguments, _ = marshal(clipString(fixed, budget))
}

// maxFiles bounds the file records one line keeps (a call moves one file and returns at most
// executor.MaxImages pictures); maxFileOp and maxFileHash the encoded bytes of a record's op
// and sha256 (its path is a short field).
const (
	maxFiles    = 10
	maxFileOp   = 16
	maxFileHash = 66
)

// boundFiles redacts and bounds the file records: at most maxFiles, each path a short field
// (a path or a picture's name comes from the client or the sandbox: 4 KiB of "<", each
// encoded as six bytes, made a line no clipping could fit, and the call's outcome unwritable).
// When anything is cut, one clip record ("files") describes the whole redacted list.
func (l *Log) boundFiles(files []FileRecord, clips []Clip) ([]FileRecord, []Clip) {
	if len(files) == 0 || mutated("audit-bound-files") {
		return files, clips
	}
	out := make([]FileRecord, 0, min(len(files), maxFiles))
	whole := make([]FileRecord, 0, len(files))
	cut := len(files) > maxFiles
	for i, f := range files {
		f.Op, f.Path, f.SHA256 = l.redact.Replace(f.Op), l.redact.Replace(f.Path), l.redact.Replace(f.SHA256)
		whole = append(whole, f)
		if i >= maxFiles {
			continue
		}
		b := FileRecord{Op: clipString(strings.ToValidUTF8(f.Op, "\uFFFD"), maxFileOp), Path: clipString(strings.ToValidUTF8(f.Path, "\uFFFD"), maxShortField),
			Bytes: f.Bytes, SHA256: clipString(strings.ToValidUTF8(f.SHA256, "\uFFFD"), maxFileHash), FileBytes: f.FileBytes}
		cut = cut || b != f
		out = append(out, b)
	}
	if cut {
		all, _ := json.Marshal(whole) // strings and numbers: cannot fail
		clips = append(clips, NewClip("files", all))
	}
	return out, clips
}

// shownPath is a workspace path as the call's result shows it (visible.Name: quoted when it is
// not plain printable text), so a reader of the log (jq -c) sees a bidi override or U+2028 as
// the result shows it, not laid out by the terminal (attack round atk38b, F6).
func shownPath(p string) string {
	if mutated("audit-paths-raw") {
		return strings.ToValidUTF8(p, "\uFFFD")
	}
	return visible.Name(p)
}

// maxApplied bounds the applied changes one line names (the call's result names up to 1000):
// the rest are counted in applied_more. Each path is a short field, op and sha256 as a file
// record's.
const maxApplied = 16

// maxRefusedWhy bounds the encoded bytes of a refused change's reason in the line (the call's
// result says it whole).
const maxRefusedWhy = 200

// minArgsRoom is the room an entry's arguments keep when its applied changes are many and
// every other field is at its bound: applied changes past it are counted, not named.
const minArgsRoom = 2 << 10

// boundApplied redacts and bounds w's applied changes (w itself is not changed: a copy is
// returned): at most maxApplied, each path a short field. When anything is cut it returns the
// whole redacted list as well, for its clip record ("workspace.applied").
func (l *Log) boundApplied(w *WorkspaceRecord) (*WorkspaceRecord, []byte) {
	if w == nil {
		return w, nil
	}
	c := *w
	if len(c.RefusedChanges) > 0 && !mutated("audit-bound-refused") {
		c.RefusedChanges = make([]RefusedRecord, 0, min(len(w.RefusedChanges), maxApplied))
		for i, r := range w.RefusedChanges {
			if i >= maxApplied {
				c.RefusedMore++
				continue
			}
			c.RefusedChanges = append(c.RefusedChanges, RefusedRecord{
				Path: clipString(shownPath(l.redact.Replace(r.Path)), maxShortField),
				Why:  clipString(strings.ToValidUTF8(l.redact.Replace(r.Why), "\uFFFD"), maxRefusedWhy)})
		}
	}
	if len(w.Applied) == 0 || mutated("audit-bound-applied") {
		return &c, nil
	}
	c.Applied = make([]AppliedRecord, 0, min(len(w.Applied), maxApplied))
	whole := make([]AppliedRecord, 0, len(w.Applied))
	cut := len(w.Applied) > maxApplied
	for i, a := range w.Applied {
		a.Op, a.Path, a.SHA256 = l.redact.Replace(a.Op), shownPath(l.redact.Replace(a.Path)), l.redact.Replace(a.SHA256)
		whole = append(whole, a)
		if i >= maxApplied {
			c.AppliedMore++
			continue
		}
		b := AppliedRecord{Op: clipString(strings.ToValidUTF8(a.Op, "\uFFFD"), maxFileOp), Path: clipString(strings.ToValidUTF8(a.Path, "\uFFFD"), maxShortField),
			Bytes: a.Bytes, SHA256: clipString(strings.ToValidUTF8(a.SHA256, "\uFFFD"), maxFileHash)}
		cut = cut || b != a
		c.Applied = append(c.Applied, b)
	}
	if !cut {
		return &c, nil
	}
	all, _ := json.Marshal(whole) // strings and numbers: cannot fail
	return &c, all
}

// trimApplied counts (in applied_more) the applied changes of e that leave its arguments less
// than minArgsRoom of the line, last first, and returns the clip records, with one for the
// whole applied list (whole, or e's list as it is) if any was dropped. Only a line whose other
// fields are near their bounds loses any.
func trimApplied(e *Entry, clips []Clip, whole []byte) []Clip {
	if mutated("audit-bound-applied") || mutated("audit-applied-room") {
		return clips
	}
	args := e.Arguments
	defer func() { e.Arguments = args }()
	e.Arguments = json.RawMessage(`""`)
	size := func() int {
		b, _ := marshal(e)                                // strings, numbers and compact JSON: cannot fail
		return len(b) + min(len(args), minArgsRoom) + 200 // room for the arguments' clip record
	}
	w := e.Workspace
	if size() < MaxLine {
		return clips
	}
	if whole == nil && len(w.Applied) > 0 {
		whole, _ = json.Marshal(w.Applied)
		clips = append(clips, NewClip("workspace.applied", whole))
		e.Clipped = clips
	}
	for len(w.Applied) > 0 && size() >= MaxLine {
		w.Applied = w.Applied[:len(w.Applied)-1]
		w.AppliedMore++
	}
	// then the refused changes named, last first: counted in refused_more (trial38 F3)
	for len(w.RefusedChanges) > 0 && size() >= MaxLine {
		w.RefusedChanges = w.RefusedChanges[:len(w.RefusedChanges)-1]
		w.RefusedMore++
	}
	return clips
}

// argsClip is the clip record of the arguments: of whole when the logged text is not made
// from them (over the shape bound), else of the logged (redacted) text.
func argsClip(args string, whole []byte) Clip {
	if whole != nil {
		return NewClip("arguments", whole)
	}
	return NewClip("arguments", []byte(args))
}

// redactArgs returns the arguments' text to log, secrets redacted. Secrets are looked for in
// the decoded values (every string, object key and number), not in the encoded text, where
// JSON escaping (\u0061, \/, an escaped U+2028) would hide them; the values are then encoded
// again (keys sorted). Arguments over the shape bound (MaxJSONValues, MaxJSONDepth) are not
// decoded: their text is not logged, and whole (non-nil) is what the clip record describes.
func (l *Log) redactArgs(raw json.RawMessage) (args string, whole []byte) {
	if len(raw) == 0 || !l.hasSecrets || mutated("audit-redact-decoded") {
		return l.redact.Replace(string(raw)), nil
	}
	if err := CheckShape(raw, MaxJSONValues, MaxJSONDepth); err != nil {
		return fmt.Sprintf("[mcpsandbox: arguments not logged: %v, so their secrets cannot be redacted]", err), raw
	}
	if !json.Valid(raw) {
		// Not JSON: logged as the text it is (a JSON string), where an escape is no escape.
		return l.redact.Replace(string(raw)), nil
	}
	out, err := l.reencode(raw)
	if err != nil {
		return fmt.Sprintf("[mcpsandbox: arguments not logged: %v]", err), raw
	}
	return out, nil
}

// reencode is valid JSON raw decoded token by token and encoded again, every string, key and
// number redacted. Keys keep their order and a key given twice stays twice (a map would keep
// one value: the record of a call refused for its duplicate keys would not show what was sent).
func (l *Log) reencode(raw []byte) (string, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var b bytes.Buffer
	var stack []byte          // '{' or '[' per open container
	first, key := true, false // the next value opens its container; the next string is a key
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return b.String(), nil
		}
		if err != nil {
			return "", err
		}
		if dl, ok := tok.(json.Delim); ok && (dl == '}' || dl == ']') {
			b.WriteByte(byte(dl))
			stack = stack[:len(stack)-1]
			first, key = false, len(stack) > 0 && stack[len(stack)-1] == '{'
			continue
		}
		inObj := len(stack) > 0 && stack[len(stack)-1] == '{'
		switch {
		case !first && inObj && key:
			b.WriteByte(',')
		case !first && !inObj && len(stack) > 0:
			b.WriteByte(',')
		}
		first = false
		switch x := tok.(type) {
		case json.Delim:
			b.WriteByte(byte(x))
			stack = append(stack, byte(x))
			first, key = true, x == '{'
			continue
		case string:
			writeString(&b, l.redact.Replace(x))
		case json.Number:
			if r := l.redact.Replace(string(x)); r != string(x) {
				writeString(&b, r)
			} else {
				b.WriteString(string(x))
			}
		case bool:
			b.WriteString(strconv.FormatBool(x))
		case nil:
			b.WriteString("null")
		}
		if inObj && key {
			b.WriteByte(':')
			key = false
			first = true // the value follows the colon with no comma
			continue
		}
		key = inObj
	}
}

// writeString writes s as a JSON string, <, > and & as they are.
func writeString(b *bytes.Buffer, s string) {
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		plain = c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\'
	}
	if plain { // most arguments: nothing to escape
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string: cannot fail
	b.Truncate(b.Len() - 1) // its newline
}

func nilIfEmpty(c []Clip) []Clip {
	if len(c) == 0 {
		return nil
	}
	return c
}

// encLen is the length of s encoded as a JSON string (quotes included).
func encLen(s string) int {
	b, _ := marshal(s)
	return len(b)
}

// clipString is the longest prefix of s, cut at a character boundary, whose JSON encoding is
// at most max bytes.
func clipString(s string, max int) string {
	if len(s)+2 <= max && encLen(s) <= max {
		return s
	}
	cut := func(n int) string {
		for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
			n--
		}
		return s[:n]
	}
	lo, hi := 0, min(len(s), max) // an encoded byte per byte at least
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if encLen(cut(mid)) <= max {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return cut(lo)
}

// foreignLine describes a last line that is not an mcpsandbox entry.
type foreignLine struct {
	n   int64
	sha string
	why string
}

// head returns the hash the next entry chains from: the last line's hash if it is an
// mcpsandbox entry, else (foreign != nil) the sha256 of its raw bytes; and the file's size. A
// last line cut short (no newline) is ended first, so nothing is ever appended to it (size
// counts that newline).
func head(f *os.File) (prev string, foreign *foreignLine, size int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return "", nil, 0, fmt.Errorf("stat audit log: %w", err)
	}
	size = st.Size()
	if size == 0 {
		return "", nil, 0, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return "", nil, 0, fmt.Errorf("read audit log tail: %w", err)
	}
	why := ""
	if last[0] != '\n' {
		if _, err := f.Write([]byte{'\n'}); err != nil {
			return "", nil, 0, fmt.Errorf("end the audit log's unfinished last line: %w", err)
		}
		why = "no newline at its end: a write cut short, or appended by hand"
		size++
	}
	end := size - 1 // the last line is [start, end)
	start, err := lineStart(f, end)
	if err != nil {
		return "", nil, 0, err
	}
	n := end - start
	if why == "" && n <= maxParse {
		b := make([]byte, n)
		if _, err := f.ReadAt(b, start); err != nil {
			return "", nil, 0, fmt.Errorf("read audit log tail: %w", err)
		}
		h, reason := checkEntry(b)
		if reason == "" {
			return h, nil, size, nil
		}
		why = reason
	} else if why == "" {
		why = fmt.Sprintf("over %d bytes", maxParse)
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, start, n)); err != nil {
		return "", nil, 0, fmt.Errorf("read audit log tail: %w", err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if mutated("audit-foreign") {
		return "", nil, 0, fmt.Errorf("the audit log's last line is not an mcpsandbox entry (%s)", why)
	}
	return sum, &foreignLine{n: n, sha: sum, why: why}, size, nil
}

// lineStart finds where the line ending at end begins, reading backwards a window at a time.
func lineStart(f *os.File, end int64) (int64, error) {
	buf := make([]byte, tailRead)
	for pos := end; pos > 0; {
		n := min(pos, tailRead)
		if _, err := f.ReadAt(buf[:n], pos-n); err != nil && err != io.EOF {
			return 0, fmt.Errorf("read audit log tail: %w", err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return pos - n + int64(i) + 1, nil
		}
		pos -= n
	}
	return 0, nil
}

// checkEntry returns the line's hash if it is an mcpsandbox entry whose content matches its
// hash, and why it is not one serve wrote (content not matching the hash, or keys and bytes
// not as serve writes them: checkForm).
func checkEntry(line []byte) (hash, why string) {
	var e Entry
	if err := json.Unmarshal(line, &e); err != nil {
		return "", "not an audit entry: " + clipString(err.Error(), 200)
	}
	stored := e.Hash
	if len(stored) != 64 {
		return "", "not an audit entry: no hash"
	}
	sealed, err := e.seal()
	if err == nil && e.Hash != stored {
		// a line written before serve escaped the runes that render as nothing (atk41 F6):
		// its hash covers them raw
		sealed, err = e.sealWith(marshalPrintOnly)
	}
	if err == nil && e.Hash != stored {
		// a line written before serve escaped the runes a terminal does not print (atk40 F3):
		// its hash covers them raw
		sealed, err = e.sealWith(json.Marshal)
	}
	if err != nil || e.Hash != stored {
		return stored, "its content does not match its hash (the line was edited, or not written by mcpsandbox)"
	}
	return stored, checkForm(line, sealed)
}

// Problem is a line Verify cannot account for.
type Problem struct {
	Line int
	What string
}

// VerifyReport is the outcome of Verify.
type VerifyReport struct {
	Lines int
	Head  string // hash of the last line: record it to detect later truncation
	// Problems lists every line Verify cannot account for (edited, inserted, removed before it,
	// malformed, over-long, foreign), in order.
	Problems []Problem
	// Unfinished counts calls with a "started" entry and no outcome entry: serve died running
	// them (or is running them now).
	Unfinished int
	// Continues is what the first line names of the chain before it (a log rotated or
	// emptied since serve wrote there); nil for the first chain at a path, or an old log.
	Continues *ChainLink
	// Bytes is the log's length read; AnchorSeen says a line ends at the anchor's byte length
	// with the anchor's hash (VerifyWith).
	Bytes      int64
	AnchorSeen bool
}

const maxTrackedCalls = 100_000

// Verify checks the chain of the log read from r and reports every line it cannot account for.
// Its error names the first such line; the report lists them all.
func Verify(r io.Reader) (VerifyReport, error) { return VerifyWith(r, nil) }

// VerifyWith is Verify, and looks for the line anchor a names (AnchorSeen).
func VerifyWith(r io.Reader, a *Anchor) (VerifyReport, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var rep VerifyReport
	prev := []string{""} // hashes the next line may name as its prev
	open := map[string]bool{}
	var ends [3]int64 // where the last lines ended (the line before a cut marker, or before its foreign one)
	for {
		line, n, sum, terminated, err := readLine(br)
		if err != nil {
			return rep, fmt.Errorf("read audit log: %w", err)
		}
		if n == 0 && !terminated {
			break // end of file
		}
		rep.Lines++
		ends = [3]int64{rep.Bytes, ends[0], ends[1]}
		rep.Bytes += n
		if terminated {
			rep.Bytes++
		}
		problem := func(format string, a ...any) {
			rep.Problems = append(rep.Problems, Problem{rep.Lines, fmt.Sprintf(format, a...)})
		}
		raw := hex.EncodeToString(sum)
		if !terminated {
			problem("no newline at its end (a write cut short, or appended by hand): not an mcpsandbox entry")
			prev = []string{raw}
			break
		}
		if n > maxParse {
			problem("over-long (%d bytes; mcpsandbox lines are at most %d): not an mcpsandbox entry", n, MaxLine)
			prev = []string{raw}
			continue
		}
		h, why := checkEntry(line)
		if why != "" && h == "" {
			size := fmt.Sprintf("%d bytes", n)
			if n >= MaxLine {
				size += fmt.Sprintf(", over-long: mcpsandbox lines are at most %d", MaxLine)
			}
			problem("%s (%s)", why, size)
			prev = []string{raw}
			continue
		}
		var e Entry
		_ = json.Unmarshal(line, &e) // checkEntry parsed it
		if rep.Lines == 1 {
			rep.Continues = e.Continues
		}
		if a != nil && rep.Bytes == a.Bytes && h == a.Head && why == "" {
			rep.AnchorSeen = true
		}
		if !contains(prev, e.Prev) {
			problem("chain broken: it names previous hash %.12s…, which is not line %d's (a line was removed or inserted here)", e.Prev, rep.Lines-1)
		}
		if why != "" {
			problem("%s", why)
			prev = []string{h, raw}
		} else {
			prev = []string{h}
			if e.Tool == MarkerTool && e.Decision == DecisionCut && !mutated("audit-verify-cut-unreported") {
				problem("%s", cutProblem(e.Cut, linesUpTo(e.Cut, rep.Lines, ends)))
			}
		}
		if e.Call != "" {
			if e.Decision == DecisionStarted {
				if len(open) < maxTrackedCalls {
					open[e.Call] = true
				}
			} else {
				delete(open, e.Call)
			}
		}
	}
	rep.Unfinished = len(open)
	if len(prev) > 0 {
		rep.Head = prev[0]
	}
	if len(rep.Problems) > 0 {
		p := rep.Problems[0]
		more := ""
		if len(rep.Problems) > 1 {
			more = fmt.Sprintf(" (and %d more problem lines)", len(rep.Problems)-1)
		}
		return rep, fmt.Errorf("line %d: %s%s", p.Line, p.What, more)
	}
	return rep, nil
}

// linesUpTo is the number of lines the file found held, by where the lines before the marker
// at line n ended (ends: the end of line n-1, n-2, n-3): 0 when none ends there.
func linesUpTo(c *CutRecord, n int, ends [3]int64) int {
	if c == nil {
		return 0
	}
	for i, end := range ends {
		// (an unfinished last line was ended with a newline: one byte more)
		if n-1-i >= 1 && (end == c.Found.Bytes || end == c.Found.Bytes+1) {
			return n - 1 - i
		}
	}
	return 0
}

// cutProblem says what a cut marker (serve's, at its line) tells was lost and where; kept is
// the number of lines the file held when serve found it (0: not known).
func cutProblem(c *CutRecord, kept int) string {
	const start = "a \"cut\" marker: serve found the log cut before this line"
	if c == nil {
		return start + ": lines it wrote were removed, or the file replaced"
	}
	if c.Found.Bytes < c.Anchored.Bytes {
		where := fmt.Sprintf("from byte %d to byte %d", c.Found.Bytes, c.Anchored.Bytes)
		if kept > 0 {
			where = fmt.Sprintf("after line %d (bytes %d to %d)", kept, c.Found.Bytes, c.Anchored.Bytes)
		}
		return fmt.Sprintf("%s: it had written up to byte %d (its last line %.16s…) and found the file %d bytes long: "+
			"what it wrote %s is gone (lines removed from the end, or the file replaced by a shorter one), "+
			"and this line chains on from the line before it", start, c.Anchored.Bytes, c.Anchored.Head, c.Found.Bytes, where)
	}
	return fmt.Sprintf("%s: it had written up to byte %d (its last line %.16s…) and found the file %d bytes long with no line of its own ending there: "+
		"lines it wrote up to byte %d were removed and others put in their place, or the file was replaced", start, c.Anchored.Bytes, c.Anchored.Head, c.Found.Bytes, c.Anchored.Bytes)
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// readLine reads one line, holding at most maxParse bytes of it (line is nil when longer):
// n is its whole length without the newline, sum the sha256 of those bytes.
func readLine(br *bufio.Reader) (line []byte, n int64, sum []byte, terminated bool, err error) {
	h := sha256.New()
	for {
		chunk, rerr := br.ReadSlice('\n')
		body := chunk
		if rerr == nil {
			body = chunk[:len(chunk)-1]
			terminated = true
		}
		h.Write(body)
		if n+int64(len(body)) <= maxParse {
			line = append(line, body...)
		} else {
			line = nil
		}
		n += int64(len(body))
		switch {
		case rerr == nil:
			return line, n, h.Sum(nil), true, nil
		case errors.Is(rerr, bufio.ErrBufferFull):
			continue
		case errors.Is(rerr, io.EOF):
			return line, n, h.Sum(nil), false, nil
		default:
			return nil, n, nil, false, rerr
		}
	}
}
