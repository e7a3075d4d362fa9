package docker

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A docker entry holds the engine's variables' values, not references to them: an entry naming
// ${DOCKER_HOST} was dead in Claude Code started without the variable (it hands serve the literal
// text), while init's own check, run with it set, said "checked". A DOCKER_HOST naming the socket
// serve uses without it is left out, unless a docker context would then lead elsewhere (trial33 F7).
// Red with mutant docker-entry-engine-env-ref.
func TestServerEnvSetsEngineValues(t *testing.T) {
	dir := t.TempDir()
	for _, n := range engineEnv {
		t.Setenv(n, "")
	}
	t.Setenv("DOCKER_CONFIG", dir)
	t.Setenv("DOCKER_HOST", "unix:///run/user/1000/docker.sock")
	if got := serverEnv(nil); !slices.Equal(got, []string{"DOCKER_HOST=unix:///run/user/1000/docker.sock", "DOCKER_CONFIG=" + dir}) {
		t.Errorf("a rootless DOCKER_HOST: %q", got)
	}
	t.Setenv("DOCKER_HOST", "unix:///var/run/docker.sock")
	if got := serverEnv(nil); !slices.Equal(got, []string{"DOCKER_CONFIG=" + dir}) {
		t.Errorf("DOCKER_HOST naming the default socket: %q", got)
	}
	// a docker context other than the default would take over without DOCKER_HOST: kept
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"currentContext":"remote"}`), 0o600)
	meta := filepath.Join(dir, "contexts", "meta", "b71199ebd070b36beab7317920c2c2f1d777df8d05e5527d8458fda57cb17a7a") // sha256("remote")
	os.MkdirAll(meta, 0o700)
	os.WriteFile(filepath.Join(meta, "meta.json"), []byte(`{"Name":"remote","Endpoints":{"docker":{"Host":"unix:///run/remote.sock"}}}`), 0o600)
	if got := serverEnv(nil); !slices.Contains(got, "DOCKER_HOST=unix:///var/run/docker.sock") {
		t.Errorf("DOCKER_HOST naming the default socket, another context current: %q", got)
	}
}
