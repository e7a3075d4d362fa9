package docker

import (
	"fmt"
	"os"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	dsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// proof: a shell script in a container made as every call's is (image, mounts, runtime, user,
// network). With a writable workspace it creates a file there and removes it (the call's layer
// ends empty: the workspace is not changed), so an entry whose programs could not write the
// workspace (a directory root owns, where containers run as nobody) is never written.
func proof(p *policy.Policy) *generate.ProofCall {
	d := dsec.Of(p)
	if d == nil || d.Workspace == "" || !d.WorkspaceWritable {
		return &generate.ProofCall{Tool: sd.ToolShell, Args: map[string]any{"script": "exit 0"}}
	}
	return &generate.ProofCall{Tool: sd.ToolShell, ExitZero: true,
		Args: map[string]any{"script": `f=/workspace/.mcpsandbox-init-check-$$; : > "$f" && rm -f "$f"`},
		Hint: fmt.Sprintf("The policy makes %s writable, but a program in the container could not create a file in it. "+
			"Containers run as the workspace's owner, or as nobody (65534) when root owns it: give the directory to the user "+
			"whose files it should hold (chown -R USER: %s; chown -R 65534:65534 %s for nobody), or set docker.user, then run init again.",
			d.Workspace, d.Workspace, d.Workspace)}
}

// engineEnv are the variables by which serve finds the engine, as the docker CLI does.
var engineEnv = []string{"DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH", "DOCKER_API_VERSION"}

// serverEnv sets those of engineEnv set here, where init found and checked the engine, to their
// values here (NAME=value): a client that does not pass them (Codex passes a short list, the MCP
// Inspector four variables, Gemini CLI drops DOCKER_CERT_PATH) would start serve against the
// default socket, where a rootless or remote engine is not; and an entry naming ${DOCKER_HOST}
// instead is dead in a client started without it (a GUI launch, another terminal), which Claude
// Code hands serve as the literal text (trial33 F7). None of them is a secret (an address, a
// context's name, paths). A DOCKER_HOST naming the socket serve uses without it is left out.
func serverEnv(*policy.Policy) []string {
	if mutated("docker-entry-engine-env") {
		return nil
	}
	var set []string
	for _, n := range engineEnv {
		v := os.Getenv(n)
		if v == "" || n == "DOCKER_HOST" && sameAsUnset(v) {
			continue
		}
		if mutated("docker-entry-engine-env-ref") {
			set = append(set, n)
			continue
		}
		set = append(set, n+"="+v)
	}
	return set
}

// sameAsUnset reports whether DOCKER_HOST=host reaches the engine serve reaches with it unset
// (the default socket, no other docker context current): the entry needs no DOCKER_HOST then.
func sameAsUnset(host string) bool {
	if os.Getenv("DOCKER_CONTEXT") != "" {
		return false
	}
	h, err := engine.HostWithoutEnv()
	return err == nil && h == host
}
