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

// Hostile peer, fresh trickled bodies (atk39b F6): one client's session keeps five bodies of
// 1 MiB (more than the budget, charged at 4 times their bytes) sent most of the way and fresh,
// a byte each every 2 ms, and resends at once each one cut; another session's 200 KB call
// arrives at network pace, 10 KB every 20 ms. The budget is shared by session: the victim's
// call is answered each time (the attacker's newest body gives way, never the victim's, the
// stalest), and serve's heap stays bounded. Red with mutants http-body-budget-by-session
// (every body a principal of its own, none over its share: the victim's body is refused 503)
// and http-body-evict-newest-of-biggest (the stalest body gives way: the victim's is cut).
func TestHTTPBodyBudgetSharedBySession(t *testing.T) {
	const budget, maxBody = 16 << 20, 1 << 20
	url, _, _ := startHTTP(t, &fakeExec{}, HTTPOptions{Token: boundsToken, BodyBudget: budget, MaxBody: maxBody})
	addr := hostAddr(url)
	attacker := httpClient(t, url, boundsToken)
	defer attacker.Close()
	victim := httpClient(t, url, boundsToken)
	defer victim.Close()
	callWithin(t, victim, 2*time.Second, "before the attack")
	base := heapInUse()
	head := func(sid string, n int) string {
		return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n", HTTPPath, addr, boundsToken, sid, n)
	}

	stop := make(chan struct{})
	var cut atomic.Int32
	var wg sync.WaitGroup
	body := append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"`), bytes.Repeat([]byte("a"), maxBody-2000)...)
	for range 5 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				_, err = c.Write(append([]byte(head(attacker.ID(), maxBody-100)), body...))
				for err == nil {
					select {
					case <-stop:
						c.Close()
						return
					case <-time.After(2 * time.Millisecond):
					}
					_, err = c.Write([]byte("a"))
				}
				cut.Add(1)
				c.Close()
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	time.Sleep(time.Second) // the attacker's bodies fill the budget

	vbody := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"` + strings.Repeat("v", 200_000) + `"}}}`)
	for try := range 3 {
		before := cut.Load()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = c.Write([]byte(head(victim.ID(), len(vbody))))
		for i := 0; i < len(vbody) && err == nil; i += 10_000 {
			_, err = c.Write(vbody[i:min(i+10_000, len(vbody))])
			time.Sleep(20 * time.Millisecond)
		}
		var status, answer string
		if err == nil {
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, rerr := http.ReadResponse(bufio.NewReader(c), nil)
			if err = rerr; err == nil {
				var b bytes.Buffer
				b.ReadFrom(resp.Body)
				resp.Body.Close()
				status, answer = resp.Status, b.String()
			}
		}
		c.Close()
		if err != nil || status != "200 OK" || !strings.Contains(answer, "vvvvvvvvvv") || strings.Contains(answer, `"isError":true`) {
			t.Fatalf("try %d: the paced 200 KB call of another session was not answered while one session kept its bodies fresh: %v %s %.200s (after %s)",
				try, err, status, answer, time.Since(start).Round(time.Millisecond))
		}
		if cut.Load() == before {
			t.Fatalf("try %d: no body of the attacker's session gave way: the budget was not full, the attack did not hold", try)
		}
		t.Logf("try %d: the paced call answered in %s; attacker bodies cut or refused so far: %d", try, time.Since(start).Round(time.Millisecond), cut.Load())
	}
	grew := int64(heapInUse()) - int64(base)
	t.Logf("heap grew %d MiB (budget %d MiB)", grew>>20, budget>>20)
	if grew > 3*budget {
		t.Fatalf("serve's heap grew %d MiB under the attack: over three times the %d MiB budget", grew>>20, budget>>20)
	}
}
