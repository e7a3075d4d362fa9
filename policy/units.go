package policy

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration written in TOML as a string with units ("30s", "5m", "1m30s").
type Duration struct{ time.Duration }

// UnmarshalTOML accepts only strings: a bare number would be ambiguous (seconds? nanoseconds?).
func (d *Duration) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		if n, isInt := v.(int64); isInt {
			// the likeliest meaning, in the form that says it (trial32 F21)
			return fmt.Errorf("want a duration string such as \"30s\" or \"5m\", got %v (%s): for %d seconds write \"%ds\"", v, tomlKind(v), n, n)
		}
		return fmt.Errorf("want a duration string such as \"30s\" or \"5m\", got %v (%s)", v, tomlKind(v))
	}
	// spaces between a number and its unit ("30 s", "1m 30s") are accepted, as sizes accept
	// "64 KiB": a person writes both
	x, err := time.ParseDuration(strings.Join(strings.Fields(s), ""))
	if err != nil {
		return fmt.Errorf("%q is not a duration: write it like \"30s\", \"2m\" or \"1m30s\"", s)
	}
	d.Duration = x
	return nil
}

// String is the Go form without zero trailing units: "30s", "5m", "1h", "1m30s".
func (d Duration) String() string {
	s := d.Duration.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// MarshalText writes the String form ("30s", "5m").
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Size is a byte count written as an integer or a string with a unit ("256MiB", "64KiB", "1GB", "512k").
type Size int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, // docker-style shorthands are binary
	{"b", 1},
}

// ParseSize parses "256MiB", "64k", "1000" (bytes).
func ParseSize(s string) (Size, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) || f*float64(mult) > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is not a size: write it like \"256MiB\", \"64KiB\" or a number of bytes", s)
	}
	return Size(f * float64(mult)), nil
}

// UnmarshalTOML accepts an integer (bytes) or a string with a unit.
func (z *Size) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return fmt.Errorf("size %d is negative", x)
		}
		*z = Size(x)
		return nil
	case string:
		s, err := ParseSize(x)
		if err != nil {
			return err
		}
		*z = s
		return nil
	}
	return fmt.Errorf("want a size such as \"256MiB\" or a number of bytes, got %v (%s)", v, tomlKind(v))
}

// String renders the size in the largest binary unit that divides it exactly.
func (z Size) String() string {
	for _, u := range []struct {
		s string
		m int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if z != 0 && int64(z)%u.m == 0 {
			return fmt.Sprintf("%d%s", int64(z)/u.m, u.s)
		}
	}
	return strconv.FormatInt(int64(z), 10)
}

// MarshalText writes the human form so a saved policy reads like a hand-written one.
func (z Size) MarshalText() ([]byte, error) { return []byte(z.String()), nil }
