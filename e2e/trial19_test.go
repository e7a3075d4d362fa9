package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// verify on a docker policy whose image is not in the engine and cannot be pulled (a policy
// edited by hand to an image this host lacks, offline) says so once, in a host row with the fix,
// and does not run the harness: serve stops at start, and every scenario was an ERROR with the
// same message, 80 of them. Red with mutant verify-image-blocks.
func TestVerifyDockerImageMissing(t *testing.T) {
	needDocker(t)
	const img = "127.0.0.1:1/mcpsandbox-absent:none" // nothing listens there: the pull fails at once
	path := dockerPolicy(t, func(p *policy.Policy) { dksec.Of(p).Image = img })
	verifyBlocked(t, path,
		"docker image       "+img+" is not in the engine, and pulling it failed",
		"pull it (docker pull "+img+")",
		"3. Harness not run: serve cannot run a call on this policy here (the docker image row")
}

// init --scheme e2b --print with no --client prints the generic "mcpServers" entry, which names no
// variable, and said to give that file to the MCP Inspector as it is. The Inspector passes a stdio
// server only HOME, PATH, SHELL and TERM: the key never reached serve and every call failed. Now
// stderr names the -e flags the Inspector needs, and those flags, as said, make the call run
// (against the local E2B server). Red with mutant init-print-generic-env.
func TestInitPrintE2BInTheInspector(t *testing.T) {
	inspector := clientCLI(t, "mcp-inspector")
	e, _ := e2bInitEnv(t, e2bKey)
	out, stderr, code := e.run(t, "", "--scheme", "e2b", "--print", "--yes")
	if code != 0 {
		t.Fatalf("init exit %d:\n%s\n%s", code, out, stderr)
	}
	file := filepath.Join(e.home, "servers.json")
	os.WriteFile(file, []byte(out), 0o600)
	call := func(extra ...string) (string, string) {
		args := append([]string{"--cli", "--config", file, "--server", "sandbox"}, extra...)
		args = append(args, "--method", "tools/call", "--tool-name", "run_command", "--tool-arg", `command="true"`)
		cmd := exec.Command(inspector, args...)
		cmd.Env, cmd.Dir = append(e.env, "MCP_INSPECTOR_SECRET_STORE=memory"), e.project
		got, gotErr, _ := runCmdTimeout(t, cmd, 90*time.Second)
		return got, gotErr
	}
	// as the file is: the key does not reach serve (why the flags are needed)
	if got, gotErr := call(); strings.Contains(got, `"exit_code": 0`) || !strings.Contains(got+gotErr, "E2B_API_KEY") {
		t.Fatalf("the Inspector passed the key without -e: this test no longer shows why init names the flags\n%s\n%s", got, gotErr)
	}
	flags := regexp.MustCompile(`-e ([A-Z0-9_]+)="\$([A-Z0-9_]+)"`).FindAllStringSubmatch(stderr, -1)
	if len(flags) == 0 || !strings.Contains(stderr, `-e E2B_API_KEY="$E2B_API_KEY"`) {
		t.Fatalf("init did not say which -e flags the Inspector needs:\n%s", stderr)
	}
	var extra []string
	for _, f := range flags {
		val := ""
		for _, kv := range e.env {
			if v, ok := strings.CutPrefix(kv, f[2]+"="); ok {
				val = v
			}
		}
		extra = append(extra, "-e", f[1]+"="+val) // what the shell makes of -e NAME="$NAME"
	}
	if got, gotErr := call(extra...); !strings.Contains(got, `"exit_code": 0`) {
		t.Errorf("the Inspector with the flags init named (%v): the call did not run\n%s\n%s", extra, got, gotErr)
	}
	if strings.Contains(out, e2bKey) {
		t.Error("the printed entry holds the key itself")
	}
}

// A docker engine found through DOCKER_HOST (rootless Docker, a forwarded socket): Codex passes a
// server only a short list of variables, DOCKER_HOST not among them, so serve looked at the default
// socket and init refused the Codex entry, saying to "point DOCKER_HOST at a running engine" — set
// already. The entry now holds the variable's value, for Codex in its env table (a ${DOCKER_HOST}
// reference was dead in a client started without it, trial33 F7); a DOCKER_HOST naming the default
// socket is left out, serve's own default. Red with mutants docker-entry-engine-env and
// docker-entry-engine-env-ref.
func TestInitDockerEntryNamesDockerHost(t *testing.T) {
	needDocker(t)
	e := newInitEnv(t)
	sock := "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
		sock = strings.TrimPrefix(h, "unix://")
	}
	host := "unix://" + filepath.Dir(sock) + "//" + filepath.Base(sock) // the same engine, not the default's spelling
	e.env = append(e.env, "DOCKER_HOST="+host)
	out, stderr, code := e.run(t, "", "--scheme", "docker", "--image", dockerImage(), "--client", "codex", "--client", "gemini", "--yes")
	if code != 0 {
		t.Fatalf("init exit %d:\n%s\n%s", code, out, stderr)
	}
	codex, _ := os.ReadFile(filepath.Join(e.home, ".codex", "config.toml"))
	if !strings.Contains(string(codex), `env = { DOCKER_HOST = "`+host+`" }`) {
		t.Errorf("the Codex entry does not set DOCKER_HOST:\n%s", codex)
	}
	gemini, _ := os.ReadFile(filepath.Join(e.home, ".gemini", "settings.json"))
	if !strings.Contains(string(gemini), `"DOCKER_HOST": "`+host+`"`) {
		t.Errorf("the Gemini CLI entry does not set DOCKER_HOST:\n%s", gemini)
	}
	e = newInitEnv(t)
	e.env = append(e.env, "DOCKER_HOST=unix:///var/run/docker.sock")
	if sock != "/var/run/docker.sock" {
		return
	}
	if out, stderr, code := e.run(t, "", "--scheme", "docker", "--image", dockerImage(), "--client", "gemini", "--yes"); code != 0 {
		t.Fatalf("init exit %d:\n%s\n%s", code, out, stderr)
	}
	if gemini, _ := os.ReadFile(filepath.Join(e.home, ".gemini", "settings.json")); strings.Contains(string(gemini), "DOCKER_HOST") {
		t.Errorf("a DOCKER_HOST naming the default socket is in the entry:\n%s", gemini)
	}
}

// init --wrap knew the entries it had wrapped only by the binary's name starting with
// "mcpsandbox": built under a name of the user's (~/bin/msb, tried), a second init --wrap listed
// "msb wrap --policy P -- server" as a server to wrap and tried to wrap it again (msb wrap … --
// msb wrap …), advising to let the sandbox read the first wrap's policy. The binary itself is
// now recognised by file. Red with mutant init-wrap-self-by-file.
func TestInitWrapKnowsItsOwnEntriesUnderAnotherName(t *testing.T) {
	e := newWrapInitEnv(t)
	msb := filepath.Join(e.home, "bin", "msb")
	b, err := os.ReadFile(binPath)
	if err != nil || os.WriteFile(msb, b, 0o755) != nil {
		t.Fatalf("copy the binary: %v", err)
	}
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(msb, append([]string{"init"}, args...)...)
		cmd.Env, cmd.Dir = e.env, e.project
		return runCmd(t, cmd)
	}
	if out, stderr, code := run("--wrap", "tools-b", "--client", "claude-code", "--yes"); code != 0 || !strings.Contains(out, "wrapped: ") {
		t.Fatalf("init --wrap tools-b: exit %d\n%s\n%s", code, out, stderr)
	}
	out, _, _ := run("--wrap")
	if !strings.Contains(out, "left: it runs through mcpsandbox wrap already") {
		t.Errorf("the entry msb wrapped is listed as a server to wrap:\n%s", out)
	}
	after, _ := os.ReadFile(e.config)
	out, stderr, _ := run("--wrap", "tools-b", "--client", "claude-code", "--yes")
	if now, _ := os.ReadFile(e.config); string(now) != string(after) || regexp.MustCompile(`(?m)^wrapped: `).MatchString(out) {
		t.Errorf("wrapping it again changed the entry:\n%s\n%s\n%s", out, stderr, now)
	}
}
