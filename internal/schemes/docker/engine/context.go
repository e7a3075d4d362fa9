package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/docker/docker/client"
)

// configDir is the docker CLI's configuration directory (DOCKER_CONFIG, else ~/.docker).
func configDir() string {
	if d := os.Getenv("DOCKER_CONFIG"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".docker")
}

// currentContext resolves the docker CLI's current context (DOCKER_CONTEXT, else
// currentContext in config.json) to its engine address and TLS material, as the CLI stores
// them: contexts/meta/<sha256(name)>/meta.json and contexts/tls/<sha256(name)>/docker/*.pem.
// It returns no host for the "default" context or when none is set.
func currentContext() (host string, tls client.Opt, name string, err error) {
	dir := configDir()
	name = os.Getenv("DOCKER_CONTEXT")
	if name == "" && dir != "" {
		b, rerr := os.ReadFile(filepath.Join(dir, "config.json"))
		if rerr == nil {
			var cfg struct {
				CurrentContext string `json:"currentContext"`
			}
			if jerr := json.Unmarshal(b, &cfg); jerr != nil {
				return "", nil, "", fmt.Errorf("read %s: %w; fix or remove the file", filepath.Join(dir, "config.json"), jerr)
			}
			name = cfg.CurrentContext
		}
	}
	if name == "" || name == "default" {
		return "", nil, name, nil
	}
	sum := sha256.Sum256([]byte(name))
	id := hex.EncodeToString(sum[:])
	metaPath := filepath.Join(dir, "contexts", "meta", id, "meta.json")
	b, err := os.ReadFile(metaPath)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil, name, fmt.Errorf("docker context %q is selected (DOCKER_CONTEXT or %s) but %s does not exist; "+
			"run `docker context ls`, or unset DOCKER_CONTEXT / set DOCKER_HOST", name, filepath.Join(dir, "config.json"), metaPath)
	}
	if err != nil {
		return "", nil, name, fmt.Errorf("read docker context %q: %w", name, err)
	}
	var meta struct {
		Endpoints map[string]struct {
			Host          string `json:"Host"`
			SkipTLSVerify bool   `json:"SkipTLSVerify"`
		} `json:"Endpoints"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return "", nil, name, fmt.Errorf("docker context %q: %s: %w", name, metaPath, err)
	}
	ep, ok := meta.Endpoints["docker"]
	if !ok || ep.Host == "" {
		return "", nil, name, fmt.Errorf("docker context %q has no docker endpoint in %s; run `docker context inspect %s`", name, metaPath, name)
	}
	tlsDir := filepath.Join(dir, "contexts", "tls", id, "docker")
	if _, err := os.Stat(filepath.Join(tlsDir, "cert.pem")); err == nil {
		ca := filepath.Join(tlsDir, "ca.pem")
		if ep.SkipTLSVerify {
			ca = ""
		}
		tls = client.WithTLSClientConfig(ca, filepath.Join(tlsDir, "cert.pem"), filepath.Join(tlsDir, "key.pem"))
	}
	return ep.Host, tls, name, nil
}
