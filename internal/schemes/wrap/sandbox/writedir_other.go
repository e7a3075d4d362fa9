//go:build !linux

package sandbox

// WriteDirNote: wrap runs servers on Linux only.
func WriteDirNote(string) (note, fix string) { return "", "" }
