package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The survivors detector also finds the call's processes by the cgroup they run in, not only by
// their argv or cwd: a process inside a container that rewrote both is invisible to the survivors scan, but
// not to its container's cgroup. During the calls it records every cgroup holding one of the
// call's processes, except the cgroups of serve and of the harness itself (the allowlist scheme
// runs commands in serve's cgroup: it has no per-call cgroup to watch). After the calls, each
// recorded cgroup must be empty or gone within Expect.CgroupWait (default 3s): a process still
// listed in its cgroup.procs, read from the host, outlived its call.

// cgroupDir is the directory of pid's cgroup under /sys/fs/cgroup: the unified hierarchy's
// ("0::/path"), else the v1 pids controller's ("N:pids:/path"); "" when neither is readable.
func cgroupDir(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return ""
	}
	var unified string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[1] == "pids":
			return filepath.Join("/sys/fs/cgroup/pids", f[2])
		case f[0] == "0" && f[1] == "":
			unified = filepath.Join("/sys/fs/cgroup", f[2])
		}
	}
	if unified != "" {
		if _, err := os.Stat(filepath.Join(unified, "cgroup.procs")); err == nil {
			return unified
		}
	}
	return ""
}

// cgroupProcs lists the pids in a cgroup directory (nil when it is gone).
func cgroupProcs(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// watchCgroups records, every 50ms until ctx ends, the cgroups of the call's processes.
func (r *run) watchCgroups(ctx context.Context) {
	skip := map[string]bool{cgroupDir(os.Getpid()): true}
	if r.a.srv != nil && r.a.srv.Process != nil {
		skip[cgroupDir(r.a.srv.Process.Pid)] = true
	}
	for {
		for _, pid := range procsOf(r.a) {
			if d := cgroupDir(pid); d != "" && !skip[d] {
				r.mu.Lock()
				if r.cgroups == nil {
					r.cgroups = map[string]bool{}
				}
				r.cgroups[d] = true
				r.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// noteCgroupsAtReturn reads, the moment a call returned (end), the cgroups recorded so far,
// when the expectation holds them to a wait shorter than the harness takes to reach its
// checks: on a loaded machine serve removes a container before checkCgroups runs, so only a
// reading taken this early can show what was still listed CgroupWait after the return.
func (r *run) noteCgroupsAtReturn(end time.Time) {
	wait := r.expect.CgroupWait
	if wait <= 0 {
		return
	}
	r.mu.Lock()
	var dirs []string
	for d := range r.cgroups {
		dirs = append(dirs, d)
	}
	r.mu.Unlock()
	sort.Strings(dirs)
	var left []string
	for _, d := range dirs {
		if pids := cgroupProcs(d); len(pids) > 0 {
			left = append(left, fmt.Sprintf("%s holds pids %v", d, pids))
		}
	}
	if since := time.Since(end); len(left) > 0 && since >= wait {
		r.mu.Lock()
		if r.cgroupLeft == "" {
			r.cgroupLeft = fmt.Sprintf("processes outlived the call by %s (read %s after it returned) in its cgroup: %s", wait, since.Round(time.Microsecond), strings.Join(left, "; "))
		}
		r.mu.Unlock()
	}
}

func checkCgroups(r *run) (bool, string) {
	r.mu.Lock()
	if r.cgroupLeft != "" {
		defer r.mu.Unlock()
		return true, r.cgroupLeft
	}
	var dirs []string
	for d := range r.cgroups {
		dirs = append(dirs, d)
	}
	r.mu.Unlock()
	sort.Strings(dirs)
	if len(dirs) == 0 {
		return false, ""
	}
	wait := r.expect.CgroupWait
	if wait <= 0 {
		wait = 3 * time.Second
	}
	deadline := time.Now().Add(wait)
	for {
		var left []string
		for _, d := range dirs {
			if pids := cgroupProcs(d); len(pids) > 0 {
				left = append(left, fmt.Sprintf("%s holds pids %v", d, pids))
			}
		}
		if len(left) == 0 {
			return false, ""
		}
		if time.Now().After(deadline) {
			return true, fmt.Sprintf("processes outlived the call by %s in its cgroup: %s", wait, strings.Join(left, "; "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
