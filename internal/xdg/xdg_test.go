package xdg

import "testing"

// A relative value is ignored as the specification says; an absolute one is taken as given.
func TestDirIgnoresRelative(t *testing.T) {
	for _, c := range []struct{ val, want string }{
		{"", ""},
		{"state", ""},
		{"./state", ""},
		{"../x", ""},
		{"~/.local/state", ""},
		{"/abs/state", "/abs/state"},
	} {
		t.Setenv("XDG_STATE_HOME", c.val)
		if got := Dir("XDG_STATE_HOME"); got != c.want {
			t.Errorf("XDG_STATE_HOME=%q: Dir = %q, want %q", c.val, got, c.want)
		}
	}
}
