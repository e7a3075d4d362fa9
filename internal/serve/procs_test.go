package serve

import (
	"runtime"
	"testing"
)

func TestOneProcessorUnlessTheOperatorSaysOtherwise(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
	runtime.GOMAXPROCS(2)
	t.Setenv("GOMAXPROCS", "2")
	OneProcessor()
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Fatalf("GOMAXPROCS=2 in the environment: serve runs on %d processors, want the operator's 2", n)
	}
	t.Setenv("GOMAXPROCS", "")
	OneProcessor()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("no GOMAXPROCS in the environment: serve runs on %d processors, want 1", n)
	}
}
