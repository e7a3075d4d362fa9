package harness

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"time"
)

// The netns detector reads the sockets of the call's processes in their own network namespace
// (/proc/PID/net/*, read from the host for a process inside a container or the allowlist's
// per-call namespace), which the host's own tables (the egress detector) never show. A socket
// held by a call's process breaches when it is connected, or connecting, to an address other
// than loopback, or when it is connected in the host's own network namespace (the sandbox then
// reaches the host's loopback services). A sandbox with its own namespace and no network has
// only its own loopback: a connection there reaches nothing of the host's.

// netnsTables are the socket tables read in each process's namespace.
var netnsTables = []string{"tcp", "tcp6", "udp", "udp6"}

// tcpEstablished and tcpSynSent are /proc/net/tcp's state codes (a connected UDP socket also
// shows 01).
const (
	tcpEstablished = "01"
	tcpSynSent     = "02"
)

// watchNetns samples the call's processes' own socket tables every 20ms until ctx ends.
func (r *run) watchNetns(ctx context.Context) {
	// this thread's, not /proc/self's: an in-process serve may be preparing a namespace on
	// the main thread right now (allowlist's prepared network namespaces)
	hostNS, _ := os.Readlink("/proc/thread-self/ns/net")
	for r.netnsHit.Load() == nil {
		pids := procsOf(r.a)
		read := map[string]bool{} // namespaces already read this round
		for _, pid := range pids {
			ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
			if err != nil || read[ns] {
				continue
			}
			read[ns] = true
			for _, t := range netnsTables {
				if hit := suspectSocket(fmt.Sprintf("/proc/%d/net/%s", pid, t), t, ns == hostNS, pids); hit != "" {
					hit = fmt.Sprintf("%s (namespace %s, read through pid %d)", hit, ns, pid)
					r.netnsHit.CompareAndSwap(nil, &hit)
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// suspectSocket is the first socket of the table, held by one of pids, that breaches (see
// above), described; "" when none does.
func suspectSocket(file, table string, hostNS bool, pids []int) string {
	b, err := readTable(file)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 {
			continue
		}
		host, port, ok := strings.Cut(f[2], ":")
		raw, err := hex.DecodeString(host)
		ip := procIP(raw)
		if !ok || err != nil || ip == nil || ip.IsUnspecified() {
			continue // not connected anywhere
		}
		state := f[3]
		var why string
		switch {
		case !ip.IsLoopback() && (state == tcpEstablished || state == tcpSynSent):
			why = "connected to " + ip.String() + ", not loopback"
		case hostNS && state == tcpEstablished:
			why = "connected to the host's " + ip.String() + " in the host's own network namespace"
		default:
			continue
		}
		if pid := socketOwner(f[9], pids); pid != 0 {
			p, _ := hex.DecodeString(port)
			n := 0
			for _, c := range p {
				n = n<<8 | int(c)
			}
			return fmt.Sprintf("a %s socket of pid %d %s (port %d)", table, pid, why, n)
		}
	}
	return ""
}

func checkNetns(r *run) (bool, string) {
	if h := r.netnsHit.Load(); h != nil {
		return true, *h
	}
	return false, "no socket of the call's processes reached past their own loopback, in their own network namespace"
}
