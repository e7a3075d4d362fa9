package policy_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// nested is `a = ` and a value nested n deep: {b = {b = … 1 …}} or [[[ … 1 … ]]].
func nested(n int, open, close string) string {
	return validAllowlist + "\n[extra]\na = " + strings.Repeat(open, n) + "1" + strings.Repeat(close, n) + "\n"
}

// TestParseRefusesDeepNesting: BurntSushi/toml takes memory quadratic in the nesting depth (a
// 40 KB policy of 10 000 nested inline tables ran out of 3 GB). Such a file is refused at its
// line, naming the bound, in well under a second and without the decoder's memory (2 000 levels
// make the decoder allocate over 500 MB; fewer than 10 000 keep a mutant run out of gigabytes).
func TestParseRefusesDeepNesting(t *testing.T) {
	lines := strings.Count(validAllowlist, "\n") + 3
	for name, text := range map[string]string{
		"tables": nested(2000, "{b = ", "}"),
		"arrays": nested(2000, "[", "]"),
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := policy.Parse("deep.toml", []byte(text))
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			var pe *policy.Error
			if !errors.As(err, &pe) || len(pe.Problems) != 1 {
				t.Fatalf("want one problem, got %v", err)
			}
			pr := pe.Problems[0]
			if pr.Line != lines || !strings.Contains(pr.Msg, "64 deep") || pr.Fix == "" {
				t.Errorf("problem = %+v, want line %d naming the bound 64 and a fix", pr, lines)
			}
			if took > 2*time.Second {
				t.Errorf("took %v", took)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("allocated %d MiB", alloc>>20)
			}
		})
	}
}

// TestParseDepthSkipsStringsAndComments: brackets inside strings and comments are not nesting,
// so a policy with many of them in its values loads.
func TestParseDepthSkipsStringsAndComments(t *testing.T) {
	many := strings.Repeat("[{", 100)
	env := `env = { A = "` + many + `", B = '` + many + `', C = """
` + many + `\"""", D = '''
` + many + `''''} # ` + many
	text := strings.Replace(validAllowlist, `env = { LANG = "C.UTF-8" }`, env, 1)
	if _, err := policy.Parse("ok.toml", []byte(text)); err != nil {
		t.Fatalf("brackets in strings or a comment counted as nesting: %v", err)
	}
}

// TestLoadBounds: a policy file larger than MaxPolicyBytes is refused without being read whole.
func TestLoadBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, []byte(validAllowlist+"# "+strings.Repeat("x", policy.MaxPolicyBytes)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := policy.Load(big); err == nil || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Errorf("a policy past MaxPolicyBytes: %v", err)
	}
}

// TestCPUsFinite: limits.cpus = nan compared false with both bounds and was accepted (explain
// printed NaN; under docker serve answered initialize, then died at the first call). Every
// non-finite or out-of-range value is refused at its line, naming the key and its range.
func TestCPUsFinite(t *testing.T) {
	for _, v := range []string{"nan", "+nan", "-nan", "inf", "+inf", "-inf", "0.0", "-1.0", "1025.0"} {
		text := strings.Replace(validAllowlist, "max_output_bytes = 65536\n", "max_output_bytes = 65536\ncpus = "+v+"\n", 1)
		_, err := policy.Parse("p.toml", []byte(text))
		var pe *policy.Error
		if !errors.As(err, &pe) || len(pe.Problems) != 1 || pe.Problems[0].Key != "limits.cpus" || pe.Problems[0].Line != 8 ||
			!strings.Contains(pe.Problems[0].Msg, "not a number above 0 and at most 1024") {
			t.Errorf("cpus = %s: %v, want one problem at p.toml:8 naming limits.cpus and its range", v, err)
		}
	}
	for _, v := range []string{"0.5", "2", "1024.0"} {
		text := strings.Replace(validAllowlist, "max_output_bytes = 65536\n", "max_output_bytes = 65536\ncpus = "+v+"\n", 1)
		if _, err := policy.Parse("p.toml", []byte(text)); err != nil {
			t.Errorf("cpus = %s: %v", v, err)
		}
	}
}
