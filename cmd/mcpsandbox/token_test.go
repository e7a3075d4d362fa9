package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// writeToken writes a token file with exactly this mode (chmod after the write: the umask would
// otherwise take bits away).
func writeToken(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(f, mode); err != nil {
		t.Fatal(err)
	}
	return f
}

// serveWithToken runs `serve --http` with a policy that does not exist: httpToken runs first, so a
// token refusal is the error; a token that passes gets as far as the policy ("mcpsandbox init")
// and nothing is served. Proves the checks are wired into the command, not only into httpToken.
func serveWithToken(t *testing.T, file string) error {
	t.Helper()
	args := []string{"serve", "--policy", filepath.Join(t.TempDir(), "none.toml"), "--http", "127.0.0.1:0"}
	if file != "" {
		args = append(args, "--token-file", file)
	}
	_, _, err := runCLI(args...)
	return err
}

// Issue 22 item 6: a --token-file others can read or write is refused before serve starts, with
// the mode and the fix, even when the token in it is good; 0600 and 0400 are accepted. Catches
// the token-file-mode mutant.
func TestTokenFileMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes on Windows")
	}
	t.Setenv("MCPSANDBOX_TOKEN", "")
	const good = "0123456789abcdef0123456789abcdef"
	for _, c := range []struct {
		mode os.FileMode
		str  string
	}{{0o644, "-rw-r--r--"}, {0o640, "-rw-r-----"}, {0o604, "-rw----r--"}, {0o620, "-rw--w----"}, {0o602, "-rw-----w-"}, {0o660, "-rw-rw----"}} {
		f := writeToken(t, good+"\n", c.mode)
		want := "--token-file " + f + " is readable by others (mode " + c.str + "): chmod 600 " + f
		if _, err := httpToken(f); err == nil || err.Error() != want {
			t.Errorf("mode %o: httpToken = %v, want %q", c.mode, err, want)
		}
		if err := serveWithToken(t, f); err == nil || err.Error() != want {
			t.Errorf("mode %o: serve --token-file = %v, want %q", c.mode, err, want)
		}
	}
	for _, m := range []os.FileMode{0o600, 0o400} {
		f := writeToken(t, good+"\n", m)
		if tok, err := httpToken(f); err != nil || tok != good {
			t.Errorf("mode %o: httpToken = %q, %v; want the token", m, tok, err)
		}
		if err := serveWithToken(t, f); err == nil || !strings.Contains(err.Error(), "mcpsandbox init") {
			t.Errorf("mode %o: serve got %v, want it past the token to the missing policy", m, err)
		}
	}
}

// Issue 22 item 6: a bearer token shorter than 16 characters (after trimming white space), from
// --token-file or MCPSANDBOX_TOKEN, is refused with the fix; 16 is accepted. Catches the
// token-length mutant.
func TestTokenLength(t *testing.T) {
	t.Setenv("MCPSANDBOX_TOKEN", "")
	short := "0123456789abcde" // 15
	ok := short + "f"          // 16
	for _, content := range []string{short, short + "\n", "  " + short + " \n\n", "", "\n"} {
		f := writeToken(t, content, 0o600)
		want := "--token-file " + f + " holds a token shorter than 16 characters: use e.g. `openssl rand -hex 32 > " + f + "`"
		if _, err := httpToken(f); err == nil || err.Error() != want {
			t.Errorf("file %q: httpToken = %v, want %q", content, err, want)
		}
		if err := serveWithToken(t, f); err == nil || err.Error() != want {
			t.Errorf("file %q: serve --token-file = %v, want %q", content, err, want)
		}
	}
	for _, content := range []string{ok, " " + ok + "\n"} {
		f := writeToken(t, content, 0o600)
		if tok, err := httpToken(f); err != nil || tok != ok {
			t.Errorf("file %q: httpToken = %q, %v; want %q", content, tok, err, ok)
		}
	}

	const wantEnv = "MCPSANDBOX_TOKEN is shorter than 16 characters: use e.g. `openssl rand -hex 32`"
	for _, v := range []string{short, " " + short + "\n", "x"} {
		t.Setenv("MCPSANDBOX_TOKEN", v)
		if _, err := httpToken(""); err == nil || err.Error() != wantEnv {
			t.Errorf("MCPSANDBOX_TOKEN=%q: httpToken = %v, want %q", v, err, wantEnv)
		}
		if err := serveWithToken(t, ""); err == nil || err.Error() != wantEnv {
			t.Errorf("MCPSANDBOX_TOKEN=%q: serve = %v, want %q", v, err, wantEnv)
		}
	}
	t.Setenv("MCPSANDBOX_TOKEN", " "+ok+"\n")
	if tok, err := httpToken(""); err != nil || tok != ok {
		t.Errorf("MCPSANDBOX_TOKEN of 16: httpToken = %q, %v; want %q", tok, err, ok)
	}
}
