package harness

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
)

// readTable reads a table longer than the kernel's page per read whole: 120 listeners here,
// about four pages of /proc/net/tcp, each of them found (a read that stopped at the first
// page would miss most).
func TestReadTableReadsPastAPage(t *testing.T) {
	var ports []string
	for i := 0; i < 120; i++ {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, fmt.Sprintf("0100007F:%04X", l.Addr().(*net.TCPAddr).Port))
	}
	b, err := readTable("/proc/thread-self/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2*os.Getpagesize() {
		t.Fatalf("the table is %d bytes: not past a page, the test tests nothing", len(b))
	}
	for _, p := range ports {
		if !strings.Contains(string(b), p) {
			t.Fatalf("listener %s missing from the %d bytes read", p, len(b))
		}
	}
}
