package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// claimSessions is an executor's session table without an engine: holder H has a container,
// idle since usedAgo; each claimant named in claims waits with a claim due ago (a negative ago:
// to come), claimed in the order given; N is a newcomer without a claim.
func claimSessions(usedAgo time.Duration, claims ...any) (*Executor, map[string]*dsession) {
	e := &Executor{}
	now := time.Now()
	h := &dsession{lock: make(chan struct{}, 1), sb: &sessBox{}, used: now.Add(-usedAgo), since: now.Add(-time.Hour)}
	e.sess.m = map[string]*dsession{"H": h, "N": {lock: make(chan struct{}, 1)}} // N: a newcomer
	for i := 0; i+1 < len(claims); i += 2 {
		s := &dsession{lock: make(chan struct{}, 1)}
		e.setClaim(s, now.Add(-claims[i+1].(time.Duration)))
		e.sess.m[claims[i].(string)] = s
	}
	e.sess.live = 1
	return e, e.sess.m
}

// A freed place goes to the earliest claim come due: it is reserved for it claimGrace, and a
// session with a later claim (or the same time claimed after it) or none may not take it
// meanwhile, however early its call comes (atk42 F6: one client's second session, calling a
// second before the time, took every turn from a newcomer that came back as told). An abandoned
// claim withholds the place claimGrace at most, a claim due later withholds nothing, and a
// second place past its keep is taken at once. Red with mutant docker-session-claim-queue.
func TestDockerSessionClaimQueue(t *testing.T) {
	defer func(k, g time.Duration) { sessionKeep, claimGrace = k, g }(sessionKeep, claimGrace)
	sessionKeep, claimGrace = 30*time.Second, 10*time.Second
	const due = 500 * time.Millisecond
	// V claimed first, A0 the same time after it; H's keep has passed.
	e, m := claimSessions(40*time.Second, "V", due, "A0", due)
	m["A0"].claim = m["V"].claim
	if left := e.keepLeft(m["A0"]); left < claimGrace-2*due || left > claimGrace {
		t.Errorf("A0, claiming the same time after V, V's claim due %s ago: told to wait %s, want the rest of V's grace (~%s)", due, left, claimGrace-due)
	}
	if left := e.keepLeft(m["N"]); left <= 0 {
		t.Errorf("a newcomer while V's claim is due: may take the place now")
	}
	if left := e.keepLeft(m["V"]); left != 0 {
		t.Errorf("V at its claim: told to wait %s, want the place now", left)
	}
	// An earlier time wins over an earlier claim.
	e, m = claimSessions(40*time.Second, "A0", due, "V", 2*due)
	if e.keepLeft(m["V"]) != 0 || e.keepLeft(m["A0"]) == 0 {
		t.Errorf("V's claim is due before A0's: V must have the place, not A0")
	}
	// Negative cases: V's claim abandoned past its grace; V's claim not come yet; two places.
	e, m = claimSessions(40*time.Second, "V", claimGrace+time.Second, "A0", claimGrace)
	if left := e.keepLeft(m["A0"]); left != 0 {
		t.Errorf("A0 after V's grace passed without V: told to wait %s, want the place now", left)
	}
	e, m = claimSessions(40*time.Second, "V", -5*time.Second)
	if left := e.keepLeft(m["N"]); left != 0 {
		t.Errorf("a newcomer, V's claim to come in 5s: told to wait %s, want the place now", left)
	}
	e, m = claimSessions(40*time.Second, "V", due)
	m["H2"] = &dsession{lock: make(chan struct{}, 1), sb: &sessBox{}, used: time.Now().Add(-40 * time.Second)}
	if left := e.keepLeft(m["N"]); left != 0 {
		t.Errorf("a newcomer with two idle places past their keep, one reserved for V: told to wait %s", left)
	}
	// A free place (a removal ended) is reserved as well.
	e, m = claimSessions(40*time.Second, "V", due)
	if r := e.reservedUntil(m["N"], time.Now(), 1); r.IsZero() {
		t.Errorf("a newcomer takes the one free place reserved for V's claim")
	}
	if r := e.reservedUntil(m["N"], time.Now(), 2); !r.IsZero() {
		t.Errorf("a newcomer waits with two free places, one reserved for V: %s", time.Until(r))
	}
}

// "try again in Ns" is rounded down, so a client that obeys it comes back on time (its call
// waits the rest), not after a client that calls a second early (atk42 F6). Red with mutant
// docker-session-try-again-up.
func TestDockerSessionTryAgainOnTime(t *testing.T) {
	defer func(w time.Duration) { placeWait = w }(placeWait)
	placeWait = 20 * time.Second
	for _, left := range []time.Duration{25*time.Second + 300*time.Millisecond, 29*time.Second + 999*time.Millisecond, 21 * time.Second} {
		e := &Executor{}
		e.sess.mu.Lock()
		var by time.Time
		start := time.Now()
		err := e.awaitKeep(context.Background(), &by, time.Time{}, left, 1)
		var ref *executor.Refusal
		if !errors.As(err, &ref) {
			t.Fatalf("a wait of %s past placeWait: %v, want refused", left, err)
		}
		var n int
		i := strings.Index(ref.Reason, "try again in ")
		if i < 0 {
			t.Fatalf("no time in %q", ref.Reason)
		}
		if _, err := fmt.Sscanf(ref.Reason[i:], "try again in %ds", &n); err != nil {
			t.Fatalf("%q: %v", ref.Reason[i:], err)
		}
		if back := start.Add(time.Duration(n) * time.Second); back.After(start.Add(left)) || start.Add(left).Sub(back) > time.Second {
			t.Errorf("a wait of %s: told %ds, want the claim's time or at most 1 s before it", left, n)
		}
	}
}
