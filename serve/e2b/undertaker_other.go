//go:build !unix

package e2b

import "os/exec"

func detach(*exec.Cmd) {}
