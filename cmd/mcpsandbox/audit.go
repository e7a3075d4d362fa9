package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcpsandbox/mcpsandbox/internal/fsmode"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/cobra"
)

// NewCmdAudit builds `audit` and `audit verify`.
func NewCmdAudit(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Work with the audit log", Example: "  mcpsandbox audit verify"}
	cmd.AddCommand(&cobra.Command{
		Use:   "verify [FILE...]",
		Short: "Check the audit log's hash chain; exits 1 if any line is edited, removed, inserted or not serve's",
		Long: "verify recomputes the chain and names every line it cannot account for: edited, inserted, after a\n" +
			"removed line, malformed, over-long, or appended by anything but mcpsandbox (serve chains over such a\n" +
			"line with a \"foreign\" marker entry and goes on).\n\n" +
			"Given rotated files oldest first and the log last (audit verify audit.jsonl.2 audit.jsonl.1 audit.jsonl),\n" +
			"it checks they are one history: each file's first line names the head and length of the file before it\n" +
			"(serve writes that link when it starts a new chain at a path it wrote before).\n\n" +
			"serve keeps, beside the log, an anchor (.audit.jsonl.anchor): the hash and end of the last line it wrote.\n" +
			"verify says when the log ends before that line (lines removed from its end, the log emptied or rotated).\n" +
			"When serve finds the log cut behind that line (shorter, or another line in its place), it writes a \"cut\"\n" +
			"marker line before its own; verify names it, what is gone, and exits 1.\n\n" +
			"Exit 2: every line given verifies, but the first file continues an earlier history not given (a rotated\n" +
			"file not given or deleted, or the log emptied in place): nothing is proven of that history.\n\n" +
			"Someone who can write as serve's user can rewrite the log and the anchor together: record the head hash\n" +
			"verify prints somewhere else to check against that.",
		Example: "  mcpsandbox audit verify ~/.local/state/mcpsandbox/audit.jsonl\n" +
			"  mcpsandbox audit verify ~/.local/state/mcpsandbox/audit.jsonl.1 ~/.local/state/mcpsandbox/audit.jsonl",
		RunE: func(cmd *cobra.Command, args []string) error {
			paths := args
			if len(paths) == 0 {
				path, err := audit.DefaultPath()
				if err != nil {
					return err
				}
				paths = []string{path}
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			last := paths[len(paths)-1]
			// read before the log: lines serve appends meanwhile come after the anchored one
			anchor, aerr := audit.ReadAnchor(last)
			if mutated("verify-anchor") {
				anchor, aerr = nil, nil
			}
			bad := false
			var reps []audit.VerifyReport
			var seen []bool // the anchored line is in that file (whether or not it is intact)
			for _, path := range paths {
				rep, ok, err := verifyOne(ctx, f, path, anchor)
				if err != nil {
					return err
				}
				bad = bad || !ok
				seen = append(seen, rep.AnchorSeen)
				if !ok {
					rep = audit.VerifyReport{}
				}
				reps = append(reps, rep)
			}
			bad = !continuous(f, paths, reps) || bad
			bad = !anchored(f, paths, anchor, aerr, reps, seen) || bad
			if bad {
				return &exitError{1}
			}
			from := notGiven(f, paths, reps)
			proven := "every line is serve's and chains to the one before"
			if from != "" {
				proven = "from the first line of " + from + " on, every line is serve's and chains to the one before"
			}
			if len(paths) > 1 {
				proven += ", and the files are one history in the order given"
			}
			if anchor != nil {
				proven += ", up to the last line serve wrote"
			}
			notProven := "against someone who can write as serve's user and rewrites the chain (and the anchor) whole: compare the head with one you recorded elsewhere"
			if from != "" {
				notProven = "the history before " + from + " (not given); and " + notProven
			}
			fmt.Fprintf(f.Out, "proven: %s. Not proven: %s.\n", proven, notProven)
			if from != "" {
				return &exitError{2}
			}
			return nil
		},
	})
	return cmd
}

// continuous says (on ErrOut) where a file's first line does not follow the last non-empty file
// before it: each chain serve starts at a path it wrote before names the head it ended with.
func continuous(f *Factory, paths []string, reps []audit.VerifyReport) bool {
	ok := true
	// continuity: each non-empty file's first line names the head of the last non-empty one before it
	prev := -1
	for i, r := range reps {
		if r.Lines == 0 {
			continue
		}
		if prev >= 0 && !mutated("verify-continuity") {
			p := reps[prev]
			switch c := r.Continues; {
			case c == nil:
				fmt.Fprintf(f.ErrOut, "%s: GAP: its first line links to no earlier file, so it does not follow %s (serve links a new chain to the one it last wrote at that path: these files are not one history, or the link was cut)\n", paths[i], paths[prev])
				ok = false
			case c.Head != p.Head || c.Bytes != p.Bytes:
				fmt.Fprintf(f.ErrOut, "%s: GAP: its first line follows a log ending with head %.16s… at byte %d; %s ends with head %.16s… at byte %d (its line %d): lines between them are missing (written between a copytruncate's copy and its truncation, or removed), or the files are out of order\n",
					paths[i], c.Head, c.Bytes, paths[prev], p.Head, p.Bytes, p.Lines)
				ok = false
			}
		}
		prev = i
	}
	return ok
}

// notGiven says (on ErrOut) when the first non-empty file's first line continues an earlier
// history, which no file given holds (a rotated file not given or deleted, the log emptied in
// place: atk38b F1), and returns that file; "" when the history given starts at its beginning.
func notGiven(f *Factory, paths []string, reps []audit.VerifyReport) string {
	if mutated("audit-verify-continues-unnamed") {
		return ""
	}
	for i, r := range reps {
		if r.Lines == 0 {
			continue
		}
		if c := r.Continues; c != nil {
			fmt.Fprintf(f.ErrOut, "%s: continues an earlier history (head %.16s…, byte %d) not given: not verified (rotated away, or the log "+
				"emptied in place: give the rotated files first, oldest first: mcpsandbox audit verify OLD... %s; if they are gone, "+
				"compare that head with the one you recorded when you removed them)\n", paths[i], c.Head, c.Bytes, paths[len(paths)-1])
			return paths[i]
		}
		return ""
	}
	return ""
}

// anchored checks that the files end where serve last wrote (its anchor), and says so; seen
// says which files hold the anchored line.
func anchored(f *Factory, paths []string, anchor *audit.Anchor, aerr error, reps []audit.VerifyReport, seen []bool) bool {
	ok, last := true, paths[len(paths)-1]
	// the anchor: does the history end where serve last wrote?
	switch {
	case aerr != nil:
		fmt.Fprintf(f.ErrOut, "%s: %v\n", last, aerr)
		ok = false
	case anchor == nil:
		fmt.Fprintf(f.Out, "%s: no anchor of serve's beside it (%s): lines removed from its end, or the log emptied, cannot be seen; record the head hash elsewhere and compare later\n", last, audit.AnchorPath(last))
	default:
		at := -1
		for i, s := range seen {
			if s {
				at = i
			}
		}
		later := 0
		for i := at + 1; at >= 0 && i < len(reps); i++ {
			later += reps[i].Lines
		}
		if at < 0 || later > 0 {
			r := reps[len(reps)-1]
			fmt.Fprintf(f.ErrOut, "%s: TRUNCATED: the log (%d lines, %d bytes) ends before the last line serve wrote (its anchor %s: head %.16s… at byte %d): lines were removed from its end, or it was emptied or rotated since; give the rotated files first, oldest first: mcpsandbox audit verify OLD... %s\n",
				last, r.Lines, r.Bytes, audit.AnchorPath(last), anchor.Head, anchor.Bytes, last)
			ok = false
		} else {
			fmt.Fprintf(f.Out, "%s: ends at the last line serve wrote (its anchor: head %.16s…, byte %d)\n", paths[at], anchor.Head, anchor.Bytes)
		}
	}
	return ok
}

// verifyOne verifies one file and prints its verdict: ok false when it is not intact (said on
// ErrOut); an error when it cannot be read or verify was stopped.
func verifyOne(ctx context.Context, f *Factory, path string, anchor *audit.Anchor) (audit.VerifyReport, bool, error) {
	rep, err := verifyFile(ctx, f, path, anchor)
	if rep == nil {
		return audit.VerifyReport{}, false, err
	}
	ok := err == nil
	if errors.Is(err, errNotIntact) {
		err = nil
	}
	return *rep, ok, err
}

// errNotIntact: verifyFile read the file and said what is wrong with it.
var errNotIntact = errors.New("not intact")

func verifyFile(ctx context.Context, f *Factory, path string, anchor *audit.Anchor) (*audit.VerifyReport, error) {
	// O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open audit log: %w (serve creates it when it starts; give the path in the policy's [audit] path)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat audit log: %w", err)
	}
	if !st.Mode().IsRegular() && !mutated("verify-regular") {
		// A FIFO or a device has no end to reach: serve only ever writes a regular file.
		return nil, fmt.Errorf("%s is %s, not a regular file: it is not an audit log serve wrote (serve refuses to log to anything else)", path, fsmode.Describe(st.Mode()))
	}
	rep, err := audit.VerifyWith(&ctxReader{ctx: ctx, r: fh}, anchor)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("audit verify of %s stopped after %d lines: %w", path, rep.Lines, context.Cause(ctx))
	}
	if err != nil && len(rep.Problems) == 0 {
		fmt.Fprintf(f.ErrOut, "%s: %v\n", path, err) // could not read it
		return nil, nil
	}
	if len(rep.Problems) > 0 {
		const show = 50
		for i, p := range rep.Problems {
			if i == show {
				fmt.Fprintf(f.ErrOut, "%s: TAMPERED: and %d more lines\n", path, len(rep.Problems)-show)
				break
			}
			fmt.Fprintf(f.ErrOut, "%s: TAMPERED: line %d: %s\n", path, p.Line, p.What)
		}
		fmt.Fprintf(f.ErrOut, "%s: %d of %d lines cannot be accounted for\n", path, len(rep.Problems), rep.Lines)
		return &rep, errNotIntact
	}
	if rep.Lines == 0 {
		// Nothing to check is not a verdict on anything: say so, not "intact, 0 lines, head ".
		fmt.Fprintf(f.Out, "%s: empty log: nothing to verify (serve appends one line per call)\n", path)
		return &rep, nil
	}
	fmt.Fprintf(f.Out, "%s: intact, %d lines, head %s\n", path, rep.Lines, rep.Head)
	if rep.Unfinished > 0 {
		fmt.Fprintf(f.Out, "%s: %d calls started with no outcome line (serve died running them, or runs them now)\n", path, rep.Unfinished)
	}
	return &rep, nil
}

// ctxReader stops reading once ctx ends (SIGINT, SIGTERM): a log that keeps growing, or a
// very long one, does not keep verify running past a signal.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// setUp gives serve's log its policy file and workspace directory: the lines the egress proxy
// writes name them, and their session's client, as the call lines do (session 38).
func setUp(al *audit.Log, p *policy.Policy) {
	ws, _ := p.WorkspaceMount()
	al.SetUp(p.File, ws)
}
