package policy

import "testing"

// Programs whose input (a script, an archive, a diff) decides what they run or write count as
// interpreters: the argument check cannot see inside that input. Plain text tools do not.
func TestIsInterpreter(t *testing.T) {
	for _, n := range []string{"python3.11", "sh", "sed", "tar", "cpio", "zip", "unzip", "rsync", "patch", "less", "man", "awk", "find"} {
		if !IsInterpreter(n) {
			t.Errorf("%s is not judged an interpreter", n)
		}
	}
	for _, n := range []string{"sort", "cat", "wc", "grep", "head", "tail", "cut", "tr", "uniq", "diff", "ls"} {
		if IsInterpreter(n) {
			t.Errorf("control: the text tool %s is judged an interpreter", n)
		}
	}
}
