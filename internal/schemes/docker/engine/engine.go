// Package engine is mcpsandbox's one Docker Engine API client, shared by the docker scheme's
// executor (internal/schemes/docker/sandbox), the host doctor (verify) and init's image pull.
//
// It is a thin layer over github.com/docker/docker/client: the connection comes from the
// environment as the docker CLI reads it (DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH,
// DOCKER_API_VERSION, and the current docker context when DOCKER_HOST is unset), the API
// version is negotiated with the engine (Engine 20.10 speaks 1.41), image references are
// parsed by the registry's own reference package, and every error says which engine was
// tried and how to start one.
package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/distribution/reference"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/client"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Client is a connection to one Docker engine.
type Client struct {
	API *client.Client
	// Host is the engine's address as tried (unix:///var/run/docker.sock, tcp://…).
	Host string
	// Source says where Host came from: "DOCKER_HOST", "docker context NAME" or "default".
	Source string
}

// New connects to the engine the environment names, as the docker CLI does. It does not talk
// to the engine yet; Version or Ping does.
func New() (*Client, error) {
	host, source, ctxTLS, err := locate()
	if err != nil {
		return nil, err
	}
	opts := []client.Opt{client.FromEnv, client.WithAPIVersionNegotiation()}
	if source != "DOCKER_HOST" && source != "default" {
		opts = append(opts, client.WithHost(host))
		if ctxTLS != nil {
			opts = append(opts, ctxTLS)
		}
	}
	if err := supportedHost(host, source); err != nil {
		return nil, err
	}
	api, err := client.NewClientWithOpts(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker engine client for %s (%s): %w; check DOCKER_HOST, DOCKER_CERT_PATH and DOCKER_TLS_VERIFY", host, source, err)
	}
	return &Client{API: api, Host: api.DaemonHost(), Source: source}, nil
}

// Locate names the engine New would connect to (DOCKER_HOST, else the current docker context,
// else the default socket) and where that came from, without talking to it.
func Locate() (host, source string, err error) {
	host, source, _, err = locate()
	return host, source, err
}

func locate() (host, source string, tls client.Opt, err error) {
	if host = os.Getenv(client.EnvOverrideHost); host != "" {
		return host, "DOCKER_HOST", nil, nil
	}
	ctxHost, ctxTLS, name, err := currentContext()
	if err != nil {
		return "", "", nil, err
	}
	if ctxHost != "" {
		return ctxHost, "docker context " + name, ctxTLS, nil
	}
	return client.DefaultDockerHost, "default", nil, nil
}

// HostWithoutEnv is the engine New would connect to were DOCKER_HOST unset: the current docker
// context's, else the default socket.
func HostWithoutEnv() (string, error) {
	host, _, _, err := currentContext()
	if err != nil || host != "" {
		return host, err
	}
	return client.DefaultDockerHost, nil
}

// NewHost connects to the engine at host (unix:///path, tcp://host:port), ignoring the
// environment; timeout 0 means none.
func NewHost(host string, timeout time.Duration) (*Client, error) {
	if err := supportedHost(host, "argument"); err != nil {
		return nil, err
	}
	opts := []client.Opt{client.WithHost(host), client.WithAPIVersionNegotiation()}
	if timeout > 0 {
		opts = append(opts, client.WithTimeout(timeout))
	}
	api, err := client.NewClientWithOpts(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker engine client for %s: %w", host, err)
	}
	return &Client{API: api, Host: api.DaemonHost(), Source: "argument"}, nil
}

// NewHTTP talks to an engine through an HTTP client that dials it itself (a unix socket
// dialer, as verify.DockerClient builds).
func NewHTTP(hc *http.Client) (*Client, error) {
	api, err := client.NewClientWithOpts(client.WithHost(client.DefaultDockerHost), client.WithHTTPClient(hc), client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker engine client: %w", err)
	}
	return &Client{API: api, Host: "a caller-supplied connection", Source: "argument"}, nil
}

func supportedHost(host, source string) error {
	if source == "DOCKER_HOST" && strings.Contains(host, "${") && !mutated("docker-host-unexpanded-silent") {
		// an entry naming ${DOCKER_HOST}, started by a client that leaves an unset variable's
		// reference as it is (Claude Code) (trial33 F7)
		return fmt.Errorf("DOCKER_HOST is the literal text %s: the client that started serve did not expand it (the variable is not set where the client started); "+
			"set it there, or run mcpsandbox init again: its entries now hold the engine's address itself", host)
	}
	if strings.HasPrefix(host, "ssh://") {
		return fmt.Errorf("docker engine %s (from %s): ssh:// engines are not supported by mcpsandbox yet; "+
			"forward the remote socket (ssh -nNT -L /tmp/docker.sock:/var/run/docker.sock HOST) and set DOCKER_HOST=unix:///tmp/docker.sock, "+
			"or expose the engine over tcp with TLS", host, source)
	}
	return nil
}

// Close releases the client's connections.
func (c *Client) Close() error { return c.API.Close() }

// Where names the engine tried, for messages: "unix:///var/run/docker.sock (default)".
func (c *Client) Where() string { return c.Host + " (" + c.Source + ")" }

// Version asks the engine for its version; the error says which engine was tried and how to
// start one.
func (c *Client) Version(ctx context.Context) (types.Version, error) {
	v, err := c.API.ServerVersion(ctx)
	if err != nil {
		return v, c.Unreachable(err)
	}
	return v, nil
}

// MissingRuntime says why the engine cannot run containers on the runtime named (a name from
// its daemon.json), or "" when it can; "" names the engine's default, which it always has.
func (c *Client) MissingRuntime(info system.Info, name string) string {
	if what, fix := c.RuntimeMissing(info, name); what != "" {
		return what + ": " + fix
	}
	return ""
}

// RuntimeMissing is MissingRuntime's message in its two parts, what is missing and how to add
// it, for a report that shows them apart (verify's docker runtime row); "", "" when it is there.
func (c *Client) RuntimeMissing(info system.Info, name string) (what, fix string) {
	if _, ok := info.Runtimes[name]; ok || name == "" {
		return "", ""
	}
	have := slices.Sorted(maps.Keys(info.Runtimes))
	what = fmt.Sprintf("the engine at %s has no runtime %q (it has: %s)", c.Where(), name, strings.Join(have, ", "))
	if near := nearestRuntime(name, have); near != "" && !mutated("docker-runtime-no-suggestion") {
		about := ""
		if g := runtimeAbout[near]; g != "" {
			about = " (" + g + ")"
		}
		return what, fmt.Sprintf("did you mean %q%s? set runtime = %q", near, about, near)
	}
	return what, "install and register it in daemon.json (crun and runsc: sudo sh scripts/docker-runtimes.sh)"
}

// runtimeAliases are what people call a runtime, for the name engines register it under
// (trial35 F16: runtime = "gvisor" on an engine with runsc got no did-you-mean).
var runtimeAliases = map[string]string{"gvisor": "runsc", "g-visor": "runsc", "kata": "kata-runtime", "kata-containers": "kata-runtime"}

// runtimeAbout says what a runtime's name is, when the name does not.
var runtimeAbout = map[string]string{"runsc": "gVisor", "kata-runtime": "Kata Containers"}

// nearestRuntime is the engine's runtime name meant by name: the one an alias stands for, or
// one within two edits (policy.Nearest, case folded); "" when none is near.
func nearestRuntime(name string, have []string) string {
	low := strings.ToLower(name)
	if a, ok := runtimeAliases[low]; ok && slices.Contains(have, a) {
		return a
	}
	return policy.Nearest(low, have)
}

// Info is the engine's system info (runtimes, security options, cgroup and limit support).
func (c *Client) Info(ctx context.Context) (system.Info, error) {
	i, err := c.API.Info(ctx)
	if err != nil {
		return i, c.Unreachable(err)
	}
	return i, nil
}

// ErrUnreachable marks errors meaning no engine answered (Denied ones too: none answered this user).
var ErrUnreachable = errors.New("docker engine not reachable")

// Unreachable wraps an error from talking to the engine with where it was tried and what to do.
// Errors the engine itself answered with are returned with the engine's address only.
func (c *Client) Unreachable(err error) error {
	if err == nil {
		return nil
	}
	if Denied(err) { // the chain kept (%w): callers ask Denied of it too
		return fmt.Errorf("%w at %s: %w; %s", ErrUnreachable, c.Where(), err, DeniedAdvice(c.Host))
	}
	if client.IsErrConnectionFailed(err) || isDialError(err) {
		return fmt.Errorf("%w at %s: %v; %s", ErrUnreachable, c.Where(), err, StartAdvice(c.Source))
	}
	return fmt.Errorf("docker engine at %s: %w", c.Where(), err)
}

// isDialError: the client could not reach the engine at all (errors the engine answered with
// carry its words, and are not this).
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op)
}

// StartAdvice says how to get an engine answering, for this OS and how the address was chosen.
func StartAdvice(source string) string {
	var b strings.Builder
	switch runtime.GOOS {
	case "linux":
		b.WriteString("start Docker (systemctl start docker, or run dockerd in the background as root); install it with apt-get install docker.io (Debian/Ubuntu) if it is missing")
	case "darwin", "windows":
		b.WriteString("start Docker Desktop (or Colima/Rancher Desktop) and wait until it says it is running")
	default:
		b.WriteString("start a Docker engine")
	}
	if source == "default" {
		b.WriteString("; or point DOCKER_HOST at a running engine (unix:///path/docker.sock, tcp://host:2376 with DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH)")
	} else {
		b.WriteString("; or check " + source + ", which chose this address")
	}
	return b.String()
}

// ParseImage parses an image reference as the registry does ("python:3.12-slim",
// "ghcr.io/o/i@sha256:…", "localhost:5000/i:t") and returns its normalized, tagged form
// (latest when neither tag nor digest is given).
func ParseImage(s string) (reference.Named, error) {
	ref, err := reference.ParseNormalizedNamed(s)
	if err != nil {
		return nil, fmt.Errorf("image %q is not a valid image reference: %w; write it as name[:tag] or name@sha256:digest", s, err)
	}
	return reference.TagNameOnly(ref), nil
}

// ImagePresent says whether the engine holds the image, and its ID.
func (c *Client) ImagePresent(ctx context.Context, image string) (id string, ok bool, err error) {
	if _, err := ParseImage(image); err != nil {
		return "", false, err
	}
	ins, err := c.API.ImageInspect(ctx, image)
	if cerrdefs.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, c.Unreachable(err)
	}
	return ins.ID, true, nil
}

// ImagesHeld names up to 8 tagged images the engine holds, as "a, b, …", the one nearest want
// first when one is within two edits (a misspelt name's right one is often there: trial34 F9);
// "" when it holds none or cannot be asked. init, verify and serve name them after a missing
// image (trial37 F14: serve's error did not).
func (c *Client) ImagesHeld(ctx context.Context, want string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	imgs, err := c.API.ImageList(ctx, image.ListOptions{})
	if err != nil {
		return ""
	}
	var tags []string
	for _, im := range imgs {
		for _, t := range im.RepoTags {
			if t != "<none>:<none>" {
				tags = append(tags, t)
			}
		}
	}
	if near := policy.Nearest(want, tags); near != "" {
		tags = append([]string{near}, slices.DeleteFunc(tags, func(t string) bool { return t == near })...)
	}
	return strings.Join(tags[:min(len(tags), 8)], ", ")
}

// MissingImageAdvice is what to do when the engine lacks an image.
func MissingImageAdvice(image string) string {
	return fmt.Sprintf("pull it (docker pull %s), or build a local image and name it in docker.image; "+
		"offline, scripts/build-test-image.sh builds one from Debian packages", image)
}
