package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os/user"
	"runtime"
	"strings"
)

// Denied says whether err, from talking to the engine, is its socket refusing this user
// (EACCES or EPERM on connect, as for a user outside the docker group): the engine may well
// be running, so starting or installing it is not the way on. An engine's own refusal (an
// authorization plugin's 403) is not this: it answered.
func Denied(err error) bool {
	return isDialError(err) && errors.Is(err, fs.ErrPermission) && !mutated("docker-denied-advice")
}

// DeniedAdvice says what to do when the engine at host refuses this user: the socket's owner,
// group and mode, and the two ways on (its group, or an engine of the user's own).
func DeniedAdvice(host string) string {
	who := "this user"
	if u, err := user.Current(); err == nil {
		who += " (" + u.Username + ")"
	}
	if runtime.GOOS == "windows" {
		return "the engine is likely running, but " + who + " may not open " + host +
			": add yourself to the docker-users group (as administrator: net localgroup docker-users %USERNAME% /add), then sign out and in again"
	}
	path, ok := strings.CutPrefix(host, "unix://")
	if !ok {
		return "the engine at " + host + " refuses " + who + ": check that address's permissions, or point DOCKER_HOST at an engine you may use"
	}
	group, mode := "docker", "its directory may not be searchable by you"
	if g, m, err := socketOwner(path); err == nil {
		group, mode = g, m
	}
	join := "add yourself to the socket's group (sudo usermod -aG " + group + " $USER)"
	if group == "root" || group == "0" { // no docker group when the engine started: it falls back to root's
		group = "docker"
		join = "create a docker group (sudo groupadd docker) and restart the engine (sudo systemctl restart docker), " +
			"which then gives its socket that group; add yourself to it (sudo usermod -aG docker $USER)"
	}
	return fmt.Sprintf("the engine is likely running, but %s may not open its socket %s (%s): "+
		"%s, then log in again "+
		"(a running shell or program does not gain a new group; newgrp %s gives one shell it now); "+
		"note that the %s group is root-equivalent (its members can run any container as root); "+
		"or run rootless Docker (dockerd-rootless-setuptool.sh install) and point DOCKER_HOST at its socket "+
		"(DOCKER_HOST=unix://$XDG_RUNTIME_DIR/docker.sock)", who, path, mode, join, group, group)
}
