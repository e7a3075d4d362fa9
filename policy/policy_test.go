package policy_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

const validAllowlist = `version = 1
scheme = "allowlist"
name = "sandbox"

[limits]
timeout = "30s"
max_output_bytes = 65536

[allowlist]
workspace = "/srv/ws"
env = { LANG = "C.UTF-8" }

[[allowlist.commands]]
name = "wc"
path = "/usr/bin/wc"
sha256 = "0000000000000000000000000000000000000000000000000000000000000000"
deny_args = ["--files0-from*"]
`

func TestParseValid(t *testing.T) {
	p, err := policy.Parse("ok.toml", []byte(validAllowlist))
	if err != nil {
		t.Fatal(err)
	}
	if p.Limits.Timeout.Duration != 30*time.Second || p.Limits.MaxOutputBytes != 65536 || p.Limits.Pids != 64 {
		t.Errorf("limits = %+v", p.Limits)
	}
	if c, ok := alsec.Of(p).Command("wc"); !ok || c.Path != "/usr/bin/wc" || c.DenyArgs[0] != "--files0-from*" {
		t.Errorf("command wc = %+v %v", c, ok)
	}
	if len(alsec.Of(p).Env) != 1 || alsec.Of(p).Env["LANG"] != "C.UTF-8" {
		t.Errorf("env = %v", alsec.Of(p).Env)
	}
}

// A file's env is the complete environment: the default LANG must not be merged into it.
func TestEnvIsNotMerged(t *testing.T) {
	src := strings.Replace(validAllowlist, `env = { LANG = "C.UTF-8" }`, `env = { TZ = "UTC" }`, 1)
	p, err := policy.Parse("x", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := alsec.Of(p).Env["LANG"]; ok || alsec.Of(p).Env["TZ"] != "UTC" {
		t.Errorf("env = %v, want only TZ", alsec.Of(p).Env)
	}
}

func TestParseProblems(t *testing.T) {
	cases := []struct {
		name, edit string // edit: "old=>new" applied to validAllowlist
		line       int
		key, msg   string
	}{
		{"unknown top key", `name = "sandbox"=>name = "sandbox"` + "\ncolour = 1", 4, "colour", "unknown key"},
		{"unknown limits key", `timeout = "30s"=>timeout = "30s"` + "\nmemroy = 1", 7, "limits.memroy", "unknown key"},
		{"unknown command key", `name = "wc"=>name = "wc"` + "\npth = 1", 15, "allowlist.commands.pth", "unknown key"},
		{"bad duration", `timeout = "30s"=>timeout = "30 parsecs"`, 6, "limits.timeout", "not a duration"},
		{"number as duration", `timeout = "30s"=>timeout = 30`, 6, "limits.timeout", "duration string"},
		{"timeout over max", `timeout = "30s"=>timeout = "11m"`, 6, "limits.timeout", "hard maximum"},
		{"bad size", `max_output_bytes = 65536=>max_output_bytes = "lots"`, 7, "limits.max_output_bytes", "not a size"},
		// the file's words, not Go's ("TOML value has type int64; destination has type string")
		{"wrong type", `max_output_bytes = 65536=>max_output_bytes = 65536` + "\npids = \"x\"", 8, "limits.pids", "the value is a string; this key takes a whole number"},
		{"decimal for a whole number", `max_output_bytes = 65536=>max_output_bytes = 65536` + "\npids = 6.5", 8, "limits.pids", "the value is a decimal number; this key takes a whole number"},
		{"string for a list", `workspace = "/srv/ws"=>workspace = "/srv/ws"` + "\nread_paths = \"/x\"", 11, "allowlist.read_paths", "the value is a string; this key takes a list"},
		{"number as duration, in words", `timeout = "30s"=>timeout = 30`, 6, "limits.timeout", "got 30 (a whole number)"},
		{"bool as size, in words", `max_output_bytes = 65536=>max_output_bytes = true`, 7, "limits.max_output_bytes", "got true (true or false)"},
		{"number as network, in words", `workspace = "/srv/ws"=>workspace = "/srv/ws"` + "\nnetwork = 3", 11, "allowlist.network", "network is 3 (a whole number)"},
		{"relative workspace", `workspace = "/srv/ws"=>workspace = "ws"`, 10, "allowlist.workspace", "not absolute"},
		{"root workspace", `workspace = "/srv/ws"=>workspace = "/"`, 10, "allowlist.workspace", "cannot be /"},
		{"unknown scheme", `scheme = "allowlist"=>scheme = "firejail"`, 2, "scheme", "unknown scheme"},
		{"missing version", `version = 1=>`, 0, "version", "missing"},
		{"future version", `version = 1=>version = 2`, 1, "version", "not supported"},
		{"relative command path", `path = "/usr/bin/wc"=>path = "wc"`, 15, "allowlist.commands[0].path", "not a clean absolute path"},
		{"missing command path", `path = "/usr/bin/wc"=>`, 13, "allowlist.commands[0].path", "missing"},
		{"bad sha", `sha256 = "0000000000000000000000000000000000000000000000000000000000000000"=>sha256 = "abc"`, 16, "allowlist.commands[0].sha256", "not a sha256"},
		{"bad glob", `deny_args = ["--files0-from*"]=>deny_args = ["[x"]`, 17, "allowlist.commands[0].deny_args[0]", "not a valid glob"},
		{"LD_PRELOAD in env", `env = { LANG = "C.UTF-8" }=>env = { LD_PRELOAD = "/x.so" }`, 11, "allowlist.env.LD_PRELOAD", "inject code"},
		// glibc's loader of iconv modules ran a call's code inside a pinned iconv (atk40 F7)
		{"GCONV_PATH in env", `env = { LANG = "C.UTF-8" }=>env = { GCONV_PATH = "." }`, 11, "allowlist.env.GCONV_PATH", "inject code"},
		{"GIT_CONFIG_KEY_0 in env", `env = { LANG = "C.UTF-8" }=>env = { GIT_CONFIG_KEY_0 = "core.pager" }`, 11, "allowlist.env.GIT_CONFIG_KEY_0", "inject code"},
		{"PATH in env", `env = { LANG = "C.UTF-8" }=>env = { PATH = "/x" }`, 11, "allowlist.env.PATH", "fixed"},
		{"syntax error", `[limits]=>[limits`, 5, "", "table name"}, // the line holding the unclosed header
		{"unknown table", `[[allowlist.commands]]=>[unused]`, 13, "unused", "unknown key"},
		{"no commands", `[[allowlist.commands]]=>[unused]`, 9, "allowlist.commands", "no commands"},
		{"docker runtime as a path", `version = 1=>version = 1` + "\n[docker]\nruntime = \"/usr/bin/runc\"", 3, "docker.runtime", "not a runtime name"},
		{"sessions zero", `timeout = "30s"=>timeout = "30s"` + "\nmax_sessions = 0", 7, "limits.max_sessions", "outside 1..4096"},
		{"session idle too short", `timeout = "30s"=>timeout = "30s"` + "\nsession_idle = \"5s\"", 7, "limits.session_idle", "outside 1m..24h"},
		{"connections too few", `timeout = "30s"=>timeout = "30s"` + "\nmax_connections = 2", 7, "limits.max_connections", "outside 8..8192"},
		{"egress connections zero", `timeout = "30s"=>timeout = "30s"` + "\negress_connections = 0", 7, "limits.egress_connections", "outside 1..1024"},
		{"bad e2b reuse", `version = 1=>version = 1` + "\n[e2b]\nreuse = \"forever\"", 3, "e2b.reuse", "not a reuse mode"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old, repl, _ := strings.Cut(c.edit, "=>")
			src := strings.Replace(validAllowlist, old, repl, 1)
			if src == validAllowlist {
				t.Fatalf("edit %q did not apply", c.edit)
			}
			_, err := policy.Parse("p.toml", []byte(src))
			var pe *policy.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *policy.Error", err)
			}
			for _, pr := range pe.Problems {
				if pr.Key == c.key && strings.Contains(pr.Msg, c.msg) {
					if pr.File != "p.toml" || pr.Line != c.line {
						t.Errorf("located at %s:%d, want p.toml:%d", pr.File, pr.Line, c.line)
					}
					if pr.Fix == "" {
						t.Errorf("problem %q has no fix", pr)
					}
					return
				}
			}
			t.Errorf("no problem with key %q containing %q in:\n%v", c.key, c.msg, err)
		})
	}
}

func TestEveryProblemReported(t *testing.T) {
	src := strings.NewReplacer(`timeout = "30s"`, `timeout = "11m"`, `workspace = "/srv/ws"`, `workspace = "ws"`,
		`sha256 = "0000000000000000000000000000000000000000000000000000000000000000"`, `sha256 = "x"`).Replace(validAllowlist)
	_, err := policy.Parse("p.toml", []byte(src))
	var pe *policy.Error
	if !errors.As(err, &pe) || len(pe.Problems) != 3 {
		t.Fatalf("want 3 problems, got %v", err)
	}
	if !strings.Contains(err.Error(), "3 problems") {
		t.Errorf("message does not count the problems: %v", err)
	}
}

func TestRoundTripKeepsHash(t *testing.T) {
	for _, scheme := range policy.Schemes {
		p := policy.Default(scheme)
		alsec.Of(p).Workspace = "/srv/ws"
		alsec.Of(p).Commands = []policy.Command{{Name: "wc", Path: "/usr/bin/wc", SHA256: strings.Repeat("ab", 32), DenyArgs: []string{"-x*"}}}
		if err := p.Validate(); err != nil {
			t.Fatalf("%s default invalid: %v", scheme, err)
		}
		b, err := policy.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := policy.Parse("rt.toml", b)
		if err != nil {
			t.Fatalf("%s: reparse: %v\n%s", scheme, err, b)
		}
		if p.Hash() != q.Hash() {
			t.Errorf("%s: hash changed across save/load:\n%s", scheme, b)
		}
	}
}

func TestHashSensitivity(t *testing.T) {
	a := policy.Default(dksec.Name)
	b := policy.Default(dksec.Name)
	if a.Hash() != b.Hash() {
		t.Fatal("equal policies hash differently")
	}
	dksec.Of(b).SetNet(policy.Network{Mode: policy.NetNamed, Name: "bridge"})
	if a.Hash() == b.Hash() {
		t.Error("changing the active section did not change the hash")
	}
	c := policy.Default(dksec.Name)
	e2bsec.Of(c).Template = "other" // inactive section: not part of the effective policy
	if a.Hash() != c.Hash() {
		t.Error("an inactive section changed the hash")
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]policy.Size{"256MiB": 256 << 20, "64k": 64 << 10, "1GB": 1e9, "1000": 1000, "1.5KiB": 1536} {
		if got, err := policy.ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "-1", "NaNMiB", "1e300GiB"} {
		if _, err := policy.ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) succeeded", bad)
		}
	}
}

// FuzzParse: no input may panic the loader, and every failure must be a located *Error.
func FuzzParse(f *testing.F) {
	f.Add([]byte(validAllowlist))
	f.Add([]byte("version = 1\nscheme = \"docker\"\n[docker]\nimage = \"x\"\n"))
	f.Add([]byte("[[allowlist.commands]]\nname = 1\n[limits]\ntimeout = \"-1s\"\nmemory = \"9999999999GiB\""))
	f.Add([]byte("version = 1\nscheme = \"e2b\"\n[e2b]\napi_url = \"::\"\nsandbox_timeout = \"1h\""))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := policy.Parse("fuzz.toml", data)
		if err == nil {
			if p == nil {
				t.Fatal("nil policy without error")
			}
			_ = p.Hash()
			if _, err := policy.Marshal(p); err != nil {
				t.Fatalf("valid policy does not marshal: %v", err)
			}
			return
		}
		var pe *policy.Error
		if !errors.As(err, &pe) || len(pe.Problems) == 0 {
			t.Fatalf("error is not a located policy error: %v", err)
		}
	})
}

func TestCloneIsDeep(t *testing.T) {
	p := policy.Default(alsec.Name)
	alsec.Of(p).Commands = []policy.Command{{Name: "wc", DenyArgs: []string{"--x"}}}
	alsec.Of(p).ReadPaths = []string{"/a"}
	c := p.Clone()
	alsec.Of(c).Commands[0].Name = "sort"
	alsec.Of(c).Commands[0].DenyArgs[0] = "--y"
	alsec.Of(c).ReadPaths[0] = "/b"
	alsec.Of(c).Env["X"] = "1"
	if alsec.Of(p).Commands[0].Name != "wc" || alsec.Of(p).Commands[0].DenyArgs[0] != "--x" || alsec.Of(p).ReadPaths[0] != "/a" || alsec.Of(p).Env["X"] != "" {
		t.Fatalf("Clone shares state with the original: %+v", alsec.Of(p))
	}
	if c.Hash() == p.Hash() {
		t.Fatal("the changed clone hashes like the original")
	}
}

// A syntax error is located on the line that holds it, not where the parser stopped.
func TestSyntaxErrorLine(t *testing.T) {
	_, err := policy.Parse("p.toml", []byte("version = 1\nscheme = \"allowlist\"\n[limits\ntimeout = \"30s\"\n"))
	if err == nil || !strings.Contains(err.Error(), "p.toml:3:") {
		t.Fatalf("unclosed table on line 3: %v", err)
	}
}

// A wrongly typed value does not hide the file's other mistakes: the unknown key after it is
// reported too, each at its own line (issue 24), and so is what validation finds (the file has
// no commands: trial22).
func TestTypeErrorDoesNotHideUnknownKeys(t *testing.T) {
	src := "version = 1\nscheme = \"allowlist\"\n[limits]\ntimeout = 5\nmax_concurent = 3\n[allowlist]\nworkspace = \"/tmp\"\n"
	_, err := policy.Parse("p.toml", []byte(src))
	var pe *policy.Error
	if !errors.As(err, &pe) || len(pe.Problems) != 3 {
		t.Fatalf("want 3 problems, got %v", err)
	}
	if p := pe.Problems[2]; p.Key != "allowlist.commands" {
		t.Errorf("the missing commands: %+v", p)
	}
	if p := pe.Problems[1]; p.Line != 5 || p.Key != "limits.max_concurent" || !strings.Contains(p.Fix, "limits.max_concurrent") {
		t.Errorf("the unknown key: %+v", p)
	}
}

// A misspelled table written three times is one problem naming its three lines, not one per key
// in it at the first table's lines (issue 24).
func TestMisspelledTableIsOneProblem(t *testing.T) {
	src := "version = 1\nscheme = \"allowlist\"\n[allowlist]\nworkspace = \"/tmp/x\"\n"
	for range 3 {
		src += "[[allowlist.comands]]\nname = \"wc\"\npath = \"/usr/bin/wc\"\nsha256 = \"abc\"\n"
	}
	_, err := policy.Parse("p.toml", []byte(src))
	var pe *policy.Error
	if !errors.As(err, &pe) {
		t.Fatal(err)
	}
	var unknown []policy.Problem
	for _, p := range pe.Problems {
		if strings.Contains(p.Key, "comands") {
			unknown = append(unknown, p)
		}
	}
	if len(unknown) != 1 || unknown[0].Line != 5 || !strings.Contains(unknown[0].Msg, "lines 5, 9, 13") || !strings.Contains(unknown[0].Fix, "allowlist.commands") {
		t.Errorf("the misspelled table: %+v", unknown)
	}
}

// commands = ["wc"], a newcomer's first guess, is answered with how to write a command: one
// [[allowlist.commands]] table each, which init --allow writes pinned.
func TestCommandsAsNamesSaysHow(t *testing.T) {
	src := "version = 1\nscheme = \"allowlist\"\n[allowlist]\nworkspace = \"/srv/ws\"\ncommands = [\"wc\"]\n"
	_, err := policy.Parse("p.toml", []byte(src))
	var pe *policy.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *policy.Error", err)
	}
	for _, pr := range pe.Problems {
		if pr.Key == "allowlist.commands" {
			if pr.Line != 5 || !strings.Contains(pr.Msg, "list of tables") || !strings.Contains(pr.Fix, "[[allowlist.commands]]") || !strings.Contains(pr.Fix, "--allow") {
				t.Errorf("problem %s:%d %q fix %q, want line 5, a list of tables, and how to write [[allowlist.commands]] (init --allow)", pr.File, pr.Line, pr.Msg, pr.Fix)
			}
			return
		}
	}
	t.Errorf("no problem for allowlist.commands in:\n%v", err)
}

// A bare number where a duration goes says the string to write for it (trial32 F21).
func TestDurationNumberSaysWhatToWrite(t *testing.T) {
	var d policy.Duration
	if err := d.UnmarshalTOML(int64(30)); err == nil || !strings.Contains(err.Error(), `for 30 seconds write "30s"`) {
		t.Errorf("30: %v", err)
	}
}

// A duration takes spaces between its number and unit as a size does ("64 KiB"): "30 s" and
// "1m 30s" are what a person writes; a word that is not one stays refused.
func TestDurationAcceptsSpaces(t *testing.T) {
	for in, want := range map[string]time.Duration{"30 s": 30 * time.Second, " 1m 30s ": 90 * time.Second, "2m": 2 * time.Minute} {
		var d policy.Duration
		if err := d.UnmarshalTOML(in); err != nil || d.Duration != want {
			t.Errorf("%q: %v %v, want %v", in, d.Duration, err, want)
		}
	}
	var d policy.Duration
	if err := d.UnmarshalTOML("30 seconds"); err == nil {
		t.Errorf(`"30 seconds" accepted as %v`, d.Duration)
	}
}
