package verify

import (
	"context"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
)

type policyArgKey struct{}

// WithPolicyArg gives the host rows of ctx the words that name the policy to the user's
// commands (--policy PATH, or --default): the policy file they are measured with may be a
// temporary copy (--default), which no command of the user's names.
func WithPolicyArg(ctx context.Context, arg string) context.Context {
	return context.WithValue(ctx, policyArgKey{}, arg)
}

// policyArg is how the rows name the policy at path: WithPolicyArg's words, or --policy PATH.
func policyArg(ctx context.Context, path string) string {
	if a, ok := ctx.Value(policyArgKey{}).(string); ok && a != "" {
		return a
	}
	return "--policy " + shellword.Quote(path)
}

// MeasuredLayers runs serve's own probe for the policy at path (`BIN serve --check`, whose helper
// applies every layer and then tries what each one forbids) and reports each layer as a host
// check. The doctor's other checks say what the host offers; these say what serve measured in
// force, so a layer that is really missing shows here even where the kernel offers it.
func MeasuredLayers(ctx context.Context, bin, path string) []Check {
	arg := policyArg(ctx, path)
	if mutated("verify-policy-placeholder") {
		arg = "--policy FILE"
	}
	ls, err := Layers(ctx, bin, path)
	if err != nil {
		return []Check{{Name: "measured layers", Value: err.Error(),
			Advice: "serve could not measure its layers on this host: run `mcpsandbox serve " + arg + " --check` to see why"}}
	}
	return LayerChecks(ls, arg)
}

// LayerChecks turns measured layers into checks: one not in force (and not needed by design)
// is not OK, with the layer's own words for what it would do; arg names the policy in the
// command the advice gives (--policy PATH, or --default: trial37 F12, a placeholder FILE).
func LayerChecks(ls []executor.Layer, arg string) []Check {
	out := make([]Check, 0, len(ls))
	for _, l := range ls {
		c := Check{Name: "layer: " + l.Name, OK: l.Active || l.NotNeeded, Value: l.Detail}
		if !c.OK {
			c.Value = "not in force: " + l.Detail
			c.Advice = layerAdvice(l.Off, arg)
		}
		out = append(out, c)
	}
	return out
}

// layerAdvice is what a layer not in force means, by why it is off.
func layerAdvice(off, arg string) string {
	open := "see `mcpsandbox explain " + arg + "` for the threats left open"
	switch off {
	case executor.OffUnavailable:
		return "not available on this host (the value says what is missing): " + open
	case executor.OffByPolicy:
		return "the policy turns it off (the value names the setting): " + open
	case executor.OffNotProvided:
		return "this scheme does not enforce it on any host (the value says what stands in): " + open
	}
	return "serve's probe tried what this layer forbids and it was not stopped: " + open
}
