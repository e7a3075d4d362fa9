package generate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A file init may not write gets the fix for its cause: "chmod u+w" for every cause failed on a
// read-only mount and an immutable file, --print did not help for the policy, and a directory
// that took no new file got "the old file is unchanged" where there was none (trial49 F5). Red
// with mutant init-readonly-fix-unsaid.
func TestReadOnlySaysTheFixForItsCause(t *testing.T) {
	for _, tc := range []struct {
		err  error
		perm os.FileMode
		want []string
	}{
		{nil, 0o444, []string{"is read-only", "chmod u+w /p/f.json", "or use --print"}},
		{&os.PathError{Op: "access", Path: "/p/f.json", Err: syscall.EROFS}, 0o644, []string{"read-only file system", "remount it writable"}},
		{syscall.EPERM, 0o644, []string{"immutable or append-only", "chattr -i -a /p/f.json"}},
		{syscall.EACCES, 0o644, []string{"may not be written by you", "run init as its owner"}},
	} {
		got := readOnly("/p/f.json", "", tc.perm, tc.err).Error()
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%v: %q lacks %q", tc.err, got, w)
			}
		}
		if tc.err != nil && strings.Contains(got, "chmod") {
			t.Errorf("%v: %q advises chmod, which cannot help", tc.err, got)
		}
	}

	// The policy: --print does not help, another place does.
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.toml")
	if err := os.WriteFile(pol, []byte("old\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	_, err := Apply([]FileChange{{Label: "policy", Path: pol, Old: []byte("old\n"), New: []byte("new\n"), Existed: true, Mode: 0o644}})
	var ro *ReadOnlyError
	if !errors.As(err, &ro) || !strings.Contains(err.Error(), "--policy-out") || strings.Contains(err.Error(), "--print and add") {
		t.Errorf("a read-only policy file: %v", err)
	}
	if b, _ := os.ReadFile(pol); string(b) != "old\n" {
		t.Errorf("the read-only policy file was changed: %q", b)
	}

	// No file there, and its directory takes none (even root may not create a file in /proc).
	_, err = WriteFileSafely("/proc/self/mcpsandbox-init-test.json", []byte("{}"), 0o644)
	if !errors.As(err, &ro) || !strings.Contains(err.Error(), "could not be created in /proc/self") ||
		!strings.Contains(err.Error(), "nothing was written") || strings.Contains(err.Error(), "old file is unchanged") {
		t.Errorf("a new file in a directory that takes none: %v", err)
	}
}
