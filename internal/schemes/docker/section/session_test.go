package section

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// docker.reuse and its keys: validated, a writable workspace refused beside "session" with both
// keys named, and an unset value left out of the file and the hash (older policies keep theirs).
func TestDockerReuseSession(t *testing.T) {
	p := policy.Default(Name)
	h := p.Hash()
	b, err := policy.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	_, dock, _ := strings.Cut(string(b), "[docker]")
	if strings.Contains(dock, "reuse") || strings.Contains(dock, "session_idle") || strings.Contains(dock, "max_sessions") {
		t.Errorf("unset session keys written:\n%s", b)
	}
	Of(p).Reuse = "call"
	if len(Of(p).Validate(false)) != 0 {
		t.Errorf("reuse = call refused: %v", Of(p).Validate(false))
	}
	Of(p).Reuse = ""
	if p.Hash() != h {
		t.Error("the hash changed")
	}
	cases := []struct {
		mut  func(*Docker)
		key  string
		want string
	}{
		{func(d *Docker) { d.Reuse = "forever" }, "docker.reuse", "not a reuse mode"},
		{func(d *Docker) { d.Reuse, d.WorkspaceWritable, d.Workspace = "session", true, "/w" }, "docker.reuse", "docker.workspace_writable"},
		{func(d *Docker) { d.Reuse, d.MaxSessions = "session", 65 }, "docker.max_sessions", "outside"},
		{func(d *Docker) { d.Reuse, d.SessionIdle = "session", policy.Duration{Duration: time.Millisecond} }, "docker.session_idle", "outside"},
		{func(d *Docker) { d.MaxSessions = 2 }, "docker.reuse", "only to reuse"},
	}
	for i, c := range cases {
		d := *Of(policy.Default(Name))
		c.mut(&d)
		ps := d.Validate(false)
		found := false
		for _, pr := range ps {
			if pr.Key == c.key && strings.Contains(pr.Msg, c.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("case %d: want %s %q, got %+v", i, c.key, c.want, ps)
		}
	}
	d := Of(policy.Default(Name))
	d.Reuse, d.MaxSessions, d.SessionIdle = "session", 2, policy.Duration{Duration: time.Minute}
	if ps := d.Validate(false); len(ps) != 0 {
		t.Errorf("a good session policy refused: %+v", ps)
	}
	if d.Idle() != time.Minute || d.SessionCap() != 2 {
		t.Errorf("Idle %v SessionCap %d", d.Idle(), d.SessionCap())
	}
	p = policy.Default(Name)
	*Of(p) = *d
	b, _ = policy.Marshal(p)
	q, err := policy.Parse("t.toml", b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if Of(q).Reuse != "session" || Of(q).Idle() != time.Minute || Of(q).SessionCap() != 2 {
		t.Errorf("round trip: %+v", Of(q))
	}
}
