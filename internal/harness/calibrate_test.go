package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

func TestP90(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		var d []time.Duration
		for _, x := range n {
			d = append(d, time.Duration(x)*time.Millisecond)
		}
		return d
	}
	for _, c := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{ms(700), 700 * time.Millisecond},
		{ms(900, 300, 600), 900 * time.Millisecond},                                // 3 calls: the largest
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 9 * time.Millisecond},                  // nearest rank 9 of 10
		{ms(10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110), 100 * time.Millisecond}, // rank 10 of 11
	} {
		if got := p90(c.in); got != c.want {
			t.Errorf("p90(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

// The calibrated bound: widened by the measured p90, said in the detail, capped so that what
// wall_time exists to catch is still a breach under any load: a call that never ends, a call
// past the timeout by more than grace + cap, a return_within call that hangs to the timeout,
// and the control's tightened expectation (timeout 500ms, no grace) against a real timeout.
func TestCalibratedWallTimeBound(t *testing.T) {
	pol := Expect{Timeout: 5 * time.Second, Grace: Grace}
	calib := func(ds ...time.Duration) calibration {
		return calibration{samples: ds, p90: p90(ds), what: "python pass"}
	}
	judge := func(s *Scenario, c calibration, e Expect, parallel bool, dur time.Duration) (bool, string) {
		r := &run{s: s, a: &Arena{}, calib: c, expect: e}
		b, why := r.callBound(e, parallel)
		r.calls = []call{{dur: dur, bound: b, boundWhy: why}}
		return checkWallTime(r)
	}
	plain := &Scenario{ID: "sleep-past-timeout"}
	loaded := calib(900*time.Millisecond, 1400*time.Millisecond, 1100*time.Millisecond)

	// the bound and its reasons, in the detail
	_, d := judge(plain, loaded, pol, false, 6*time.Second)
	want := "bound 9.4s = timeout 5s + grace 3s + measured trivial-call p90 1.4s (python pass, 3 calls: 900ms 1.4s 1.1s)"
	if !strings.Contains(d, want) {
		t.Errorf("detail %q\nwant it to contain %q", d, want)
	}
	// uncalibrated, it says so and the bound is the old one
	if b, d := judge(plain, calibration{why: "not calibrated: no trivial call ran (x)"}, pol, false, 8100*time.Millisecond); !b || !strings.Contains(d, "bound 8s = timeout 5s + grace 3s + not calibrated: no trivial call ran (x)") {
		t.Errorf("uncalibrated 8.1s call: breach %v, %q", b, d)
	}

	cases := []struct {
		name     string
		s        *Scenario
		c        calibration
		e        Expect
		parallel bool
		dur      time.Duration
		breach   bool
	}{
		{"load within the measured latency", plain, loaded, pol, false, 9300 * time.Millisecond, false},
		{"past the calibrated bound", plain, loaded, pol, false, 9500 * time.Millisecond, true},
		{"sleep 3600 under any load", plain, calib(time.Hour), pol, false, time.Hour, true},
		{"capped at CalibrationCap", plain, calib(time.Minute), Expect{Timeout: 30 * time.Second, Grace: Grace}, false, 30*time.Second + Grace + CalibrationCap + time.Millisecond, true},
		{"capped at the timeout", plain, calib(time.Minute), pol, false, 2*pol.Timeout + Grace + time.Millisecond, true},
		{"the control's tightened expectation vs a real 6s timeout", plain, calib(10 * time.Second), Expect{Timeout: 500 * time.Millisecond}, false, 6 * time.Second, true},
		{"parallel: slot wait + measured latency", plain, loaded, pol, true, 14 * time.Second, false},
		{"parallel: past it", plain, loaded, pol, true, 14500 * time.Millisecond, true},
	}
	rw := &Scenario{ID: "grandchild-holds-stdout", ReturnWithin: policy.Duration{Duration: 4 * time.Second}}
	e8 := Expect{Timeout: 8 * time.Second, Grace: Grace}
	cases = append(cases, []struct {
		name     string
		s        *Scenario
		c        calibration
		e        Expect
		parallel bool
		dur      time.Duration
		breach   bool
	}{
		{"return_within widened by the load", rw, loaded, e8, false, 5300 * time.Millisecond, false},
		{"return_within: a call that hangs to the timeout", rw, calib(time.Minute), e8, false, e8.Timeout, true},
		{"return_within: capped below the timeout", rw, calib(time.Minute), e8, false, 7*time.Second + time.Millisecond, true},
	}...)
	for _, c := range cases {
		b, d := judge(c.s, c.c, c.e, c.parallel, c.dur)
		if b != c.breach {
			t.Errorf("%s: a %s call judged breach=%v, want %v: %s", c.name, c.dur, b, c.breach, d)
		}
	}
	if _, d := judge(rw, calib(time.Minute), e8, false, time.Second); !strings.Contains(d, "capped at 3s (3/4 of the gap from return_within to the timeout)") {
		t.Errorf("return_within cap not said: %q", d)
	}
}

// The trivial call is the first step's kind first: the same tool and path as the attack.
func TestTrivialSteps(t *testing.T) {
	for _, c := range []struct {
		first Step
		want  string
	}{
		{Step{Python: "x"}, "python"},
		{Step{Shell: "x"}, "shell"},
		{Step{Argv: []string{"tail", "-f", "x"}}, "argv"},
	} {
		s := trivialSteps(c.first)
		if s[0].Kind() != c.want {
			t.Errorf("first step %s: trivial step %s first", c.want, s[0].Kind())
		}
	}
	s := trivialSteps(Step{Argv: []string{"tail", "-f", "x"}})
	if last := s[2].Argv; len(last) != 2 || last[0] != "tail" || last[1] != "--version" {
		t.Errorf("argv fallbacks %v", s)
	}
}
