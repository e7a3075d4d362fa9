package docker

import "github.com/mcpsandbox/mcpsandbox/internal/generate"

// This package's tests render its policies without the registry (which imports this package,
// and hands the template over): they give generate the template themselves.
func init() { generate.RegisterPolicyTemplate(Scheme.Name, policyTemplate) }
