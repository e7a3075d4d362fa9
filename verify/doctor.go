package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// Check is one host fact, with what it means for the schemes.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Value  string `json:"value"`
	Advice string `json:"advice,omitempty"`
}

// Doctor inspects the host: what each scheme can rely on here.
func Doctor(ctx context.Context) []Check {
	return append(hostChecks(), DockerEngine(ctx))
}

// DockerSocket is the engine's socket: DOCKER_HOST when it is unix://, else the default.
func DockerSocket() string {
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
		return strings.TrimPrefix(h, "unix://")
	}
	return "/var/run/docker.sock"
}

// DockerClient is an HTTP client that talks to the engine's unix socket.
func DockerClient(sock string, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}}
}

// DockerEngine asks the engine for its version over its socket.
func DockerEngine(ctx context.Context) Check {
	sock := DockerSocket()
	cl := DockerClient(sock, 3*time.Second)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/version", nil)
	resp, err := cl.Do(req)
	if err != nil {
		return Check{Name: "docker engine", Value: "not reachable at " + sock,
			Advice: "needed only for the docker scheme: install it (apt-get install docker.io) and start it (systemctl start docker, or dockerd &)"}
	}
	defer resp.Body.Close()
	var v struct{ Version, APIVersion string }
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusOK {
		return Check{Name: "docker engine", Value: fmt.Sprintf("answered %s at %s but not with a version", resp.Status, sock)}
	}
	return Check{Name: "docker engine", OK: true, Value: fmt.Sprintf("%s (API %s) at %s", v.Version, v.APIVersion, sock)}
}
