package harness

import (
	"io"
	"os"
	"sync"
)

// tableBufs holds the buffers readTable reads into (the detectors read many tables a second).
var tableBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// readTable reads a /proc/net socket table in as few read(2)s as it can. Each read walks the
// kernel's socket hash from where the last one stopped to its end, empty buckets and all
// (about half a millisecond for TCP on a CI machine, shared by every network namespace), and
// os.ReadFile's small first reads and its closing read at EOF made a read of a small table
// three or four walks: the egress detector, reading eight tables every 10 ms, held about a
// third of a CPU per scenario. The kernel fills at most a page per read; a read that stops
// well short of one has reached the table's end.
func readTable(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	bp := tableBufs.Get().(*[]byte)
	defer tableBufs.Put(bp)
	buf := *bp
	var out []byte
	for {
		n, err := f.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF || n == 0 {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if n < 4096-512 { // a page would have held another line: the end
			return out, nil
		}
	}
}
