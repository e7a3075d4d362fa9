package docker

import (
	"context"
	"io"
	"net/http"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
)

// pullImage pulls an image through the engine API (internal/schemes/docker/engine: API version
// negotiation, references parsed by the registry's reference package), drawing one progress
// bar over all layers. cl carries the connection (DockerClient); nil means the engine the
// environment names (DOCKER_HOST, the docker context, or the default socket).
func pullImage(ctx context.Context, cl *http.Client, image string, w io.Writer) error {
	var c *engine.Client
	var err error
	if cl == nil {
		c, err = engine.New()
	} else {
		c, err = engine.NewHTTP(cl)
	}
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Pull(ctx, image, w)
}
