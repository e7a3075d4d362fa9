package sandbox

import (
	"slices"
	"strings"

	"github.com/docker/docker/api/types/container"
)

// mutateBuild is the container's configuration with the mechanisms a mutant build switches off;
// a release build returns it unchanged.
func mutateBuild(cfg *container.Config, hc *container.HostConfig) (*container.Config, *container.HostConfig) {
	if !mutantBuild {
		return cfg, hc
	}
	if mutated("docker-network") {
		hc.NetworkMode, cfg.NetworkDisabled = "host", false
	}
	if mutated("docker-readonly") {
		hc.ReadonlyRootfs = false
	}
	if mutated("docker-capdrop") {
		hc.CapDrop = nil
	}
	if mutated("docker-nnp") {
		hc.SecurityOpt = slices.DeleteFunc(hc.SecurityOpt, func(o string) bool { return strings.HasPrefix(o, "no-new-privileges") })
	}
	if mutated("docker-seccomp-own") { // the engine's default profile instead of serve's
		hc.SecurityOpt = slices.DeleteFunc(hc.SecurityOpt, func(o string) bool { return strings.HasPrefix(o, "seccomp=") })
	}
	if mutated("docker-wrapper-prctl-off") { // a session's supervisor left dumpable where pid 1 used prctl
		cfg.Cmd[1] = strings.Replace(cfg.Cmd[1], `if reach == "prctl":`, `if False:`, 1)
	}
	if mutated("docker-entrypoint-path") { // pid 1 is the first python3 on the image's PATH, as before atk48b F1
		cfg.Entrypoint[2] = strings.Replace(cfg.Entrypoint[2], "\nPATH=$p\n", "\nPATH=$p\ny=$(command -v python3)\n", 1)
	}
	if mutated("docker-entrypoint-start-path") { // pid 1 starts with the image's PATH: a launcher python3 finds the workspace's (atk49b F1)
		cfg.Entrypoint[2] = strings.Replace(cfg.Entrypoint[2], `PATH=$s exec "$y"`, `exec "$y"`, 1)
	}
	if mutated("docker-entrypoint-start-cwd") { // pid 1 starts in the workspace: a launcher reads its .python-version there (atk49b F1)
		cfg.Entrypoint[2] = strings.Replace(cfg.Entrypoint[2], "\ncd / || exit 1\n", "\ncd -- \"$w\" || exit 1\n", 1)
	}
	if mutated("docker-shell-wrapper-path") { // the shell wrapper's own commands found by the image's PATH
		cfg.Cmd[2] = strings.Replace(cfg.Cmd[2], "\nPATH=${2:-/usr/bin:/bin}\n", "\n", 1)
	}
	if mutated("docker-shell-wrapper-stdin") { // the shell wrapper's stdin watcher reads the /dev/null sh gives it
		cfg.Cmd[2] = strings.Replace(cfg.Cmd[2], "( cat <&9 >/dev/null;", "( cat >/dev/null;", 1)
	}
	if mutated("docker-user") {
		cfg.User = ""
	}
	if mutated("docker-pids") {
		hc.PidsLimit = nil
	}
	if mutated("docker-memory") {
		hc.Memory, hc.MemorySwap = 0, 0
	}
	if mutated("docker-tmpfs") {
		hc.Tmpfs = map[string]string{"/tmp": "rw"}
	}
	if mutated("docker-ulimits") {
		hc.Ulimits = nil
	}
	if mutated("docker-runtime") {
		hc.Runtime = ""
	}
	if mutated("docker-cgroup-ro") {
		hc.ReadonlyPaths = nil
	}
	if mutated("docker-wrapper-isolated") && len(cfg.Cmd) > 1 {
		cfg.Cmd[1] = strings.Replace(cfg.Cmd[1], isolateLine, "safe_path = program_path", 1)
	}
	if mutated("docker-shell-named-by-path") && len(cfg.Cmd) > 1 {
		cfg.Cmd[1] = strings.Replace(cfg.Cmd[1], shellByNameLine, "by_name = False", 1)
	}
	return cfg, hc
}
