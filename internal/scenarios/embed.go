// Package scenarios holds the adversarial scenarios as data: one TOML file each, embedded in
// the binary. The harness package parses and replays them; this package only carries the files.
package scenarios

import "embed"

// FS holds every scenario file (*.toml).
//
//go:embed *.toml
var FS embed.FS
