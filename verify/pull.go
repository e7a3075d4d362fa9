package verify

import (
	"context"
	"io"

	"github.com/mcpsandbox/mcpsandbox/serve/docker/engine"
)

// PullImage pulls an image through the engine API, drawing one progress bar over all layers.
// A nil client means the engine the environment names (DOCKER_HOST, the docker context, or
// the default socket).
func PullImage(ctx context.Context, cl *engine.Client, image string, w io.Writer) error {
	if cl == nil {
		c, err := engine.New()
		if err != nil {
			return err
		}
		defer c.Close()
		cl = c
	}
	return cl.Pull(ctx, image, w)
}
