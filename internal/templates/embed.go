// Package templates holds the data init writes from that no one scheme owns: the common part of
// every commented policy file (policy-common.toml.tmpl: its header, [limits] and [audit], the
// "header" template each scheme's own template calls) and the catalogue of MCP clients (where
// each keeps its config, and the shape of a server entry). A scheme's own policy template lives
// in its directory (internal/schemes/NAME/policy.toml.tmpl), carried on its registry entry.
package templates

import "embed"

// FS holds policy-common.toml.tmpl and clients.toml.
//
//go:embed policy-common.toml.tmpl clients.toml
var FS embed.FS
