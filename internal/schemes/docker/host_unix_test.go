//go:build unix

package docker

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// deniedSockEnv names, in the unprivileged run, the socket that refuses it.
const deniedSockEnv = "MCPSANDBOX_DENIED_SOCKET"

// A user the engine's socket refuses (outside the docker group) is told so by verify's engine
// row and init's refusal, with how to join the group, not to start or install Docker, which
// runs; the wizard adds that a new group counts only from a new login. Root passes every
// permission check: as root the check runs again as uid 65534.
func TestEngineDeniedIsSaid(t *testing.T) {
	if sock := os.Getenv(deniedSockEnv); sock != "" {
		checkEngineDenied(t, sock)
		return
	}
	dir := testenv.SharedDir(t)
	sock := testenv.UnixSocket(t, dir, "engine.sock", 0o600)
	if os.Geteuid() != 0 {
		os.Chmod(sock, 0)
		checkEngineDenied(t, sock)
		return
	}
	testenv.AsNobody(t, dir, "^TestEngineDeniedIsSaid$", deniedSockEnv+"="+sock)
}

func checkEngineDenied(t *testing.T, sock string) {
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	c := DockerEngine(context.Background())
	if c.OK || c.Value != "permission denied at unix://"+sock+" (DOCKER_HOST)" || !strings.HasPrefix(c.Advice, onlyDocker+": the engine is likely running") ||
		!strings.Contains(c.Advice, "usermod -aG") || strings.Contains(c.Advice, "systemctl start docker") {
		t.Errorf("verify's row: %+v; want permission denied, how to join the socket's group, not how to start Docker", c)
	}
	// the image row of a docker policy: the engine runs, so not "start the engine" (trial33 F13)
	if row := imageRow(context.Background(), "debian:bookworm-slim"); row.OK || !strings.Contains(row.Value, "the engine refused this user") ||
		!strings.HasPrefix(row.Advice, "give this user the engine") {
		t.Errorf("verify's image row: %+v; want the engine's refusal and how to be let in", row)
	}
	for _, wiz := range []bool{false, true} {
		a := &generate.Answers{Scheme: dksec.Name, Wizards: map[string]*generate.Wizard{dksec.Name: wizard}}
		var out strings.Builder
		pr := scheme.Prompt{Out: &out, Interactive: wiz, Confirm: func(string, bool) (bool, error) { return true, nil }}
		err := needs(context.Background(), a, pr)
		msg := strings.ReplaceAll(err.Error(), "\n", " ")
		if !strings.Contains(msg, "permission denied at unix://"+sock) || !strings.Contains(msg, "usermod -aG") || strings.Contains(msg, "systemctl start docker") ||
			strings.Contains(msg, "counts only from a new login") != wiz || !strings.HasSuffix(msg, "Nothing was written") {
			t.Errorf("init's refusal (wizard %v): %s\nwant permission denied and how to join the group; in the wizard, that it needs a new login", wiz, msg)
		}
	}
}
