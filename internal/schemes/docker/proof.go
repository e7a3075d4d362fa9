package docker

import (
	"fmt"
	"os"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
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

// serverEnv names those of engineEnv set here, where init found the engine: a client that does
// not pass them (Codex passes a short list, the MCP Inspector four variables, Gemini CLI drops
// DOCKER_CERT_PATH) would start serve against the default socket, where a rootless or remote
// engine is not. Each entry names them in its client's syntax, never their values.
func serverEnv(*policy.Policy) []string {
	if mutated("docker-entry-engine-env") {
		return nil
	}
	var names []string
	for _, n := range engineEnv {
		if os.Getenv(n) != "" {
			names = append(names, n)
		}
	}
	return names
}
