package main

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
)

// The forms --wrap and --unwrap take: alone (ask, or list), with names after = or as
// arguments, comma-separated or not; arguments without them stay refused.
func TestInitWrapFlagForms(t *testing.T) {
	for _, c := range []struct {
		args         []string
		wrap, unwrap []string
		err          string
	}{
		{args: []string{"--wrap"}, wrap: []string{}},
		{args: []string{"--wrap=a,b"}, wrap: []string{"a", "b"}},
		{args: []string{"--wrap", "a,b", "c"}, wrap: []string{"a", "b", "c"}},
		{args: []string{"--client", "cursor", "--wrap", "all"}, wrap: []string{"all"}},
		{args: []string{"--unwrap", "x"}, unwrap: []string{"x"}},
		{args: []string{"--unwrap"}, unwrap: []string{}},
		{args: []string{"stray"}, err: `unknown command "stray"`},
	} {
		var got *InitOptions
		cmd := NewCmdInit(&Factory{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}, func(_ context.Context, o *InitOptions) error {
			got = o
			return nil
		})
		cmd.SetArgs(c.args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		w, u := got.wrap.names(got.wrap.wrap), got.wrap.names(got.wrap.unwrap)
		if c.wrap != nil && (len(got.wrap.wrap) == 0 || !slices.Equal(w, c.wrap)) || c.unwrap != nil && (len(got.wrap.unwrap) == 0 || !slices.Equal(u, c.unwrap)) {
			t.Errorf("%q: wrap %q %q, unwrap %q %q; want %q, %q", c.args, got.wrap.wrap, w, got.wrap.unwrap, u, c.wrap, c.unwrap)
		}
	}
}
