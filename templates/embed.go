// Package templates holds the data init writes from: commented policy templates per scheme and
// the catalogue of MCP clients (where each keeps its config, and the shape of a server entry).
package templates

import "embed"

// FS holds policy-*.toml.tmpl and clients.toml.
//
//go:embed policy-*.toml.tmpl clients.toml
var FS embed.FS
