package main

import (
	"context"
	"fmt"

	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes"
)

// checkNeeds checks what the chosen scheme needs before anything is written (its entry's Needs:
// e.g. a running engine holding the image, which the wizard offers to pull, or the API key's
// variable set), and that this build's serve can run it at all (the registry says).
func checkNeeds(ctx context.Context, o *InitOptions, ask *asker) error {
	s, err := schemes.Lookup(o.A.Scheme)
	if err != nil {
		return err
	}
	if s.Needs != nil {
		if err := s.Needs(ctx, &o.A, scheme.Prompt{Out: o.IO.Out, Interactive: ask.on, Confirm: ask.confirm}); err != nil {
			return err
		}
	}
	if err := s.Runs(); err != nil {
		return fmt.Errorf("%w. init writes no client entry that cannot start: nothing was written", err)
	}
	return nil
}
