package serve

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/httpbound"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Hostile peer, request bodies: 40 connections with the token each hold a 4 MiB body, all but
// its last byte sent. Only the body budget's worth is held (16 MiB here, charged at 4 times the
// bytes); the rest are refused 503 with Retry-After or cut (a body arriving takes the charge of
// one held back, see TestHTTPDeclaredBodiesDoNotHoldTheBudget), serve's heap stays bounded, and
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
	var refused, held, cut atomic.Int32
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
				if errorsIsTimeout(err) {
					held.Add(1) // no answer: its body is being read
				} else {
					cut.Add(1) // its charge taken by a fresher body's, its connection closed
				}
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
	t.Logf("40 held bodies of 4 MiB: %d read, %d refused 503, %d cut; heap grew %d MiB (budget %d MiB)", held.Load(), refused.Load(), cut.Load(), grew>>20, budget>>20)
	if grew > 3*budget {
		t.Fatalf("serve's heap grew %d MiB with 40 bodies of 4 MiB held: over three times the %d MiB budget", grew>>20, budget>>20)
	}
	if refused.Load()+cut.Load() < 30 {
		t.Fatalf("only %d of 40 held bodies were refused 503 with Retry-After or cut; the budget holds 4", refused.Load()+cut.Load())
	}
}

// Hostile peer, declared bodies (atk39 F4): connections with the token declare 4 MiB bodies and
// send none of their bytes, others send a quarter of theirs and hold the rest; another
// session's 200 KB call is still answered, not refused 503 while they wait for the body
// timeout. Red when the declared length is charged up front (mutant http-body-declared: the
// budget is full before a byte comes) or when a body held back keeps its charge (mutant
// http-body-evict-stalled).
func TestHTTPDeclaredBodiesDoNotHoldTheBudget(t *testing.T) {
	const budget = 16 << 20
	url, _, _ := startHTTP(t, &fakeExec{}, HTTPOptions{Token: boundsToken, BodyBudget: budget})
	addr := hostAddr(url)
	cs := httpClient(t, url, boundsToken)
	defer cs.Close()
	big := strings.Repeat("x", 200<<10)
	bigCall := func(what string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake", Arguments: map[string]any{"echo": big}})
		if err != nil || r.IsError {
			t.Fatalf("%s: another session's 200 KB call was not answered: %v", what, err)
		}
	}
	bigCall("before")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	open := func(sent int) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", HTTPPath, addr, boundsToken, 4<<20)
		if sent > 0 {
			go c.Write(append([]byte("{"), bytes.Repeat([]byte(" "), sent-1)...))
		}
	}
	for range 6 {
		open(0) // declared, nothing sent
	}
	time.Sleep(300 * time.Millisecond)
	bigCall("6 bodies of 4 MiB declared, none sent")
	for range 4 {
		open(1<<20 + httpbound.FreeBody) // a quarter sent (charged 4 MiB: the four fill the budget), the rest held
	}
	time.Sleep(500 * time.Millisecond)
	bigCall("4 bodies of 4 MiB a quarter sent and held")
}
