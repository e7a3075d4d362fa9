package serve

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Hostile peer, request bodies: 40 connections with the token each hold a 4 MiB body, all but
// its last byte sent. Only the body budget's worth is read (16 MiB here: four bodies); the
// rest are refused 503 with Retry-After before a byte is read, serve's heap stays bounded, and
// a small call is still answered. Red without the budget (mutant http-body-budget): every body
// is read, 4 MiB each and more.
func TestHTTPBodyBudget(t *testing.T) {
	const budget = 16 << 20
	url, _, _ := startHTTP(t, &fakeExec{}, HTTPOptions{Token: boundsToken, BodyBudget: budget})
	addr := hostAddr(url)
	cs := httpClient(t, url, boundsToken)
	defer cs.Close()
	callWithin(t, cs, 2*time.Second, "before the bodies")
	base := heapInUse()

	body := bytes.Repeat([]byte(" "), 4<<20-1)
	body[0] = '{'
	var refused, held atomic.Int32
	var conns []net.Conn
	var wg sync.WaitGroup
	for range 40 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		wg.Go(func() {
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
				"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", HTTPPath, addr, boundsToken, len(body)+1)
			go c.Write(body) // held: the last byte never comes
			c.SetReadDeadline(time.Now().Add(3 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				held.Add(1) // no answer: its body is being read
				return
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" {
				refused.Add(1)
			}
		})
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	time.Sleep(1500 * time.Millisecond) // the held bodies are read by now
	grew := int64(heapInUse()) - int64(base)
	callWithin(t, cs, 2*time.Second, "40 bodies of 4 MiB held")
	wg.Wait()
	t.Logf("40 held bodies of 4 MiB: %d read, %d refused 503; heap grew %d MiB (budget %d MiB)", held.Load(), refused.Load(), grew>>20, budget>>20)
	if grew > 3*budget {
		t.Fatalf("serve's heap grew %d MiB with 40 bodies of 4 MiB held: over three times the %d MiB budget", grew>>20, budget>>20)
	}
	if refused.Load() < 30 {
		t.Fatalf("only %d of 40 held bodies were refused 503 with Retry-After; the budget holds 4", refused.Load())
	}
}
