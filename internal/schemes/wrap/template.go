package wrap

import _ "embed" // the policy template

// policyTemplate is the commented policy file generate.RenderPolicy writes for the scheme (its [wrap] and [wrap.tools] tables);
// {{template "header" .}} writes the common part (internal/templates/policy-common.toml.tmpl).
//
//go:embed policy.toml.tmpl
var policyTemplate string

// The registry entry carries it; the schemes package hands it to generate.
func init() { Scheme.PolicyTemplate = policyTemplate }
