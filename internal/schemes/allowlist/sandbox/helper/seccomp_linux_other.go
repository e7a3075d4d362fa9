//go:build linux && !amd64

package helper

// archDenied: the legacy calls deniedSyscalls leaves out do not exist here.
var archDenied []uintptr
