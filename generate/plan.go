package generate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// FileChange is one file init will write, with its old and new contents for the preview.
type FileChange struct {
	Label   string
	Path    string
	Old     []byte
	New     []byte
	Existed bool
	Mode    fs.FileMode
}

// Unchanged reports whether writing would change nothing.
func (c FileChange) Unchanged() bool { return c.Existed && bytes.Equal(c.Old, c.New) }

// Preview is a diff for an existing file, the whole text for a new one.
func (c FileChange) Preview() string {
	switch {
	case c.Unchanged():
		return fmt.Sprintf("%s: %s (unchanged)\n", c.Label, c.Path)
	case c.Existed:
		return fmt.Sprintf("%s: %s (changed; the old file is kept as a backup)\n%s", c.Label, c.Path, Diff(c.Path, string(c.Old), string(c.New)))
	}
	return fmt.Sprintf("%s: %s (new file)\n%s", c.Label, c.Path, indentText(string(c.New)))
}

func indentText(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "    " + l
		}
	}
	return strings.Join(lines, "")
}

// PolicyChange renders the commented policy for path.
func PolicyChange(p *policy.Policy, path string) (FileChange, error) {
	b, err := RenderPolicy(p, path)
	if err != nil {
		return FileChange{}, err
	}
	c := FileChange{Label: "policy", Path: path, New: b, Mode: 0o644}
	if old, err := os.ReadFile(path); err == nil {
		c.Old, c.Existed = old, true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return c, fmt.Errorf("read %s: %w", path, err)
	}
	return c, nil
}

// ConfigError is a client config init will not touch because it does not parse.
type ConfigError struct {
	Path string
	Err  error
}

func (e *ConfigError) Error() string {
	var se *SyntaxError
	if errors.As(e.Err, &se) {
		return fmt.Sprintf("%s:%d:%d: %s; the file is left untouched: fix it (or move it aside) and run init again", e.Path, se.Line, se.Col, se.Msg)
	}
	return fmt.Sprintf("%s: %v; the file is left untouched", e.Path, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// ClientChange merges the server entry into the target's config. An existing entry of the same
// name is an ErrExists unless replace is set.
func ClientChange(t Target, name string, e ServerEntry, replace bool) (FileChange, error) {
	c := FileChange{Label: t.Client.Name + " (" + t.Scope + ")", Path: t.Path, Mode: 0o644}
	old, err := os.ReadFile(t.Path)
	switch {
	case err == nil:
		c.Old, c.Existed = old, true
	case errors.Is(err, fs.ErrNotExist):
	default:
		return c, fmt.Errorf("read %s: %w", t.Path, err)
	}
	merged, err := Merge(t.Client, old, name, e, replace)
	if errors.Is(err, ErrExists) {
		// The very same entry (init run twice) is no conflict: nothing to change.
		if same, err := Merge(t.Client, old, name, e, true); err == nil && bytes.Equal(same, old) {
			c.New = same
			return c, nil
		}
		return c, fmt.Errorf("%s already has a server named %q: %w", t.Path, name, ErrExists)
	}
	if err != nil {
		return c, &ConfigError{Path: t.Path, Err: err}
	}
	c.New = merged
	return c, nil
}

// Snippet is the entry as a client's config holds it, for --print.
func Snippet(c Client, name string, e ServerEntry) string {
	b, _ := Merge(c, nil, name, e, false)
	return string(b)
}

// Apply writes every change, policy first. It stops at the first failure; files already
// written stay written (each is whole: written atomically, the old one backed up).
func Apply(cs []FileChange) ([]WriteResult, error) {
	var done []WriteResult
	for _, c := range cs {
		if c.Unchanged() {
			continue
		}
		r, err := WriteFileSafely(c.Path, c.New, c.Mode)
		if err != nil {
			return done, err
		}
		done = append(done, r)
	}
	return done, nil
}
