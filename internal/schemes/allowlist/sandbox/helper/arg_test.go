package helper

import "testing"

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		dir, p string
		want   bool
	}{
		{"/a", "/a", true}, {"/a", "/a/b", true}, {"/a", "/ab", false}, {"/a", "/", false},
		{"/a/b", "/a", false}, {"/", "/", true}, {"/", "/x", false}, {"/", "//x", true}, {"", "/x", true},
	} {
		if got := Within(c.dir, c.p); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.dir, c.p, got, c.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { sink = Within("/usr/lib", "/usr/lib/x86_64-linux-gnu") }); n != 0 {
		t.Errorf("Within allocates %v times a call, want none (serve asks it per mount per prefix)", n)
	}
}

var sink bool
