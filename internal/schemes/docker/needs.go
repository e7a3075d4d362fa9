package docker

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
	"io/fs"
	"os"
	"strings"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// needs: a running engine that has the runtime the answers name and holds the image (init
// offers to pull it).
func needs(ctx context.Context, a *generate.Answers, pr scheme.Prompt) error {
	d := Own(a)
	image := d.Image
	if image == "" {
		image = dksec.Of(policy.Default(dksec.Name)).Image
	}
	if err := workspaceExists(a, pr); err != nil {
		return err
	}
	c, err := engineCheck(ctx)
	if !c.OK {
		if pr.Interactive && engine.Denied(err) {
			return &scheme.RetryUnlikelyError{Err: errors.New(engineNeeded(c, err, true))}
		}
		return errors.New(engineNeeded(c, err, pr.Interactive))
	}
	if pr.Interactive {
		fmt.Fprintf(pr.Out, "Docker engine: %s\n", c.Value)
	}
	if err := runtimeRegistered(ctx, d.Runtime, len(a.Hosts) > 0); err != nil {
		return err
	}
	have, err := imagePresent(ctx, image)
	if err != nil {
		return fmt.Errorf("ask the Docker engine for the image %s: %w. Nothing was written", image, err)
	}
	if have {
		return nil
	}
	pull, err := pr.Confirm(fmt.Sprintf("The image %s is not in the engine yet. Pull it now?", image), true)
	if err != nil {
		return err
	}
	if !pull {
		return fmt.Errorf("the docker scheme needs the image %s in the engine: %s. Nothing was written", image, imageWayOn(ctx, image, pr.Interactive))
	}
	if err := pullImage(ctx, nil, image, pr.Out); err != nil {
		return fmt.Errorf("%w. Nothing was written: %s", err, imageWayOn(ctx, image, pr.Interactive))
	}
	return nil
}

// imageWayOn says how to go on without the image: with flags, run init again; in the wizard,
// whose menu follows (try again, change my answers, quit), in its words.
func imageWayOn(ctx context.Context, image string, wizard bool) string {
	has := localImages(ctx, image)
	if has != "" {
		has = " (it has " + has + ")"
	}
	if wizard {
		return fmt.Sprintf("pull it yourself (docker pull %s) and try again, or change your answers: answer 'Image' with an image the engine has%s", image, has)
	}
	return fmt.Sprintf("pull it yourself (docker pull %s) or name an image the engine has with --image%s, then run init again", image, has)
}

// runtimeRegistered checks the runtime a policy names ("" = its default) as serve does at its
// start (sandbox.CheckRuntime): the engine has it (a container of a runtime the engine lacks
// never starts, so every call would fail), and, with hosts listed, it is not gVisor without
// --host-uds=open, which refuses the egress proxy's socket (trial32 F2: refused only by the
// entry's trial, after the preview; now with the scheme's answers, which the wizard offers to change).
func runtimeRegistered(ctx context.Context, name string, hosts bool) error {
	if name == "" && !hosts {
		return nil
	}
	cl, err := engine.New()
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	info, err := cl.Info(ctx)
	if err != nil {
		return fmt.Errorf("ask the Docker engine for its runtimes: %w. Nothing was written", err)
	}
	if why := cl.MissingRuntime(info, name); why != "" {
		return fmt.Errorf("%s, or leave --runtime empty for the engine's default. Nothing was written", why)
	}
	if err := sd.CheckRuntime(cl, info, name, hosts && !mutated("init-runsc-hosts-late")); err != nil {
		return fmt.Errorf("%w. Nothing was written", err)
	}
	return nil
}

// imagePresent asks the engine the environment names (DOCKER_HOST, TLS, the docker context)
// whether it holds the image; references are parsed as the registry does (name@sha256:… too).
func imagePresent(ctx context.Context, image string) (bool, error) {
	cl, err := engine.New()
	if err != nil {
		return false, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, ok, err := cl.ImagePresent(ctx, image)
	return ok, err
}

// engineNeeded is init's refusal when the engine check failed: what was tried, then what to do
// (the check's advice without verify's "needed only for the docker scheme", which init, on the
// docker scheme, has no use for). In the wizard, whose menu offers to try again, a socket that
// refuses this user adds that a new group counts only from a new login: this init keeps the
// groups it started with, so trying again here cannot see it.
func engineNeeded(c verify.Check, err error, wizard bool) string {
	msg := "the docker scheme needs a running Docker engine: " + c.Value
	if how := strings.TrimPrefix(strings.TrimPrefix(c.Advice, onlyDocker), ": "); how != "" {
		msg += "; " + strings.TrimSuffix(how, ".")
	}
	if wizard && engine.Denied(err) {
		msg += ". A group change counts only from a new login: this init, started before it, keeps its old groups, " +
			"so after usermod quit, log in again and run init again (Try again sees a change to the socket itself, not a new group)"
	}
	return msg + ". Nothing was written"
}

// workspaceExists: the engine refuses to mount a host directory that does not exist, so every
// call would fail. The wizard offers to create it; otherwise init refuses, saying how.
func workspaceExists(a *generate.Answers, pr scheme.Prompt) error {
	d := Own(a)
	if d.Workspace == "" {
		return nil
	}
	home, _ := os.UserHomeDir()
	ws := generate.WorkspacePath(d.Workspace, home)
	// Serve's rule first: before the engine is asked (a refused workspace is said whether or
	// not an engine runs) and before a missing one is created.
	if err := generate.CheckWorkspace(ws, home); err != nil {
		return err
	}
	st, err := os.Stat(ws)
	switch {
	case err == nil && st.IsDir():
		return nil
	case err == nil:
		return fmt.Errorf("the docker workspace %s is not a directory: give --docker-workspace a directory. Nothing was written", ws)
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the docker workspace %s: %w. Nothing was written", ws, err)
	}
	mk, err := pr.Confirm(fmt.Sprintf("The workspace %s does not exist. Create it?", ws), true)
	if err != nil {
		return err
	}
	if !mk {
		return fmt.Errorf("the docker workspace %s does not exist, and the engine mounts only an existing directory (every call would fail): create it (mkdir -p %s) or give --docker-workspace an existing one, then run init again. Nothing was written", ws, shellword.Quote(ws))
	}
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return fmt.Errorf("create the docker workspace %s: %w", ws, err)
	}
	if d.WorkspaceWritable && os.Geteuid() == 0 && !mutated("init-docker-workspace-root") {
		// Containers run as the workspace's owner, as nobody when root owns it: one root
		// creates for them to write is nobody's (init's proof writes there).
		if err := os.Chown(ws, 65534, 65534); err != nil {
			return fmt.Errorf("hand the docker workspace %s to nobody (containers run as 65534 in a workspace root owns): %w", ws, err)
		}
	}
	a.Made = append(a.Made, ws)
	fmt.Fprintf(pr.Out, "created the workspace %s\n", ws)
	return nil
}

// localImages is what the engine the environment names holds, nearest image first
// (engine.ImagesHeld): init's, verify's and serve's hint after a missing image.
func localImages(ctx context.Context, image string) string {
	cl, err := engine.New()
	if err != nil {
		return ""
	}
	defer cl.Close()
	return cl.ImagesHeld(ctx, image)
}
