package harness

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"
)

// watchListen dials the arena's listen port from the host every 50ms during the calls: a
// listener the sandbox opened there may live only as long as its call.
func (r *run) watchListen(ctx context.Context) {
	for {
		if hit := dialListen(r.a); hit != "" {
			r.listenHit.CompareAndSwap(nil, &hit)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// checkListen: a connection the host made to the listen port, during the calls or now.
func checkListen(r *run) (bool, string) {
	if h := r.listenHit.Load(); h != nil {
		return true, *h + " (during the calls)"
	}
	if h := dialListen(r.a); h != "" {
		return true, h + " (after the calls)"
	}
	return false, fmt.Sprintf("nothing accepted a connection on 127.0.0.1:%d from the host", r.a.listenPort)
}

// dialListen connects to the listen port; "" when nothing accepts.
func dialListen(a *Arena) string {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(a.listenPort))
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return ""
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	buf := make([]byte, 80)
	n, _ := c.Read(buf)
	return fmt.Sprintf("the host connected to a listener on %s; it said %q", addr, buf[:n])
}
