package sandbox

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// An upstream's answer head (the control plane's or envd's) is bounded by maxAnswerHead:
// an endless run of header lines fails the request once past it, and the client stops reading
// (Go's default let each answer hold 10 MiB of head, one per request in flight). Red without
// it (mutant e2b-answer-head).
func TestHostileAnswerHeadBounded(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const offer = 64 << 20
	var sent atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				io.WriteString(c, "HTTP/1.1 200 OK\r\n")
				chunk := strings.Repeat("X-Pad: "+strings.Repeat("a", 1000)+"\r\n", 64)
				for sent.Load() < offer {
					n, err := io.WriteString(c, chunk)
					sent.Add(int64(n))
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	c := NewClient(Config{APIKey: "e2b_test", APIURL: "http://" + l.Addr().String(), Retries: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = c.Kill(ctx, "sbx")
	time.Sleep(100 * time.Millisecond)
	t.Logf("kill: %v; the upstream wrote %d bytes", err, sent.Load())
	if err == nil {
		t.Fatal("an endless answer head was accepted")
	}
	if n := sent.Load(); n > 6<<20 {
		t.Errorf("the client read %d bytes of one answer's head, want under 6 MiB", n)
	}
}
