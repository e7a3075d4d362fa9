//go:build !unix

package main

// surviveBrokenPipes: no SIGPIPE here; a write to a closed pipe fails with an error.
func surviveBrokenPipes() {}
