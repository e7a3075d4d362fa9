package generate

import (
	"errors"
	"fmt"
	"os"

	"github.com/BurntSushi/toml"

	"github.com/mcpsandbox/mcpsandbox/internal/tomlbound"
)

// MaxConfigBytes bounds a client config init reads (~/.claude.json, which Claude Code fills with
// its history of every project, is the largest: a few MB at most).
const MaxConfigBytes = 16 << 20

// ReadConfigFile reads a client config or the policy init replaces: a regular file of at most
// MaxConfigBytes. A FIFO, device or directory in its place is refused at once (not waited on:
// init would block forever on a FIFO, with nothing to write it), as is a larger file. A missing
// file is an error that wraps fs.ErrNotExist.
func ReadConfigFile(path string) ([]byte, error) {
	if mutated("init-read-regular") {
		return os.ReadFile(path)
	}
	b, err := tomlbound.ReadRegular(path, MaxConfigBytes)
	if errors.Is(err, tomlbound.ErrNotRegular) {
		return nil, fmt.Errorf("%w: move it aside", err)
	}
	return b, err
}

// decodeTOML decodes a client's TOML config into v, after refusing text nested past
// tomlbound.MaxDepth: BurntSushi/toml takes memory quadratic in the depth (a 20 KB Codex config
// of nested inline tables took init past 3 GB). The refusal is a *SyntaxError at its line.
func decodeTOML(src []byte, v any) (toml.MetaData, error) {
	var de *tomlbound.DepthError
	if errors.As(tomlbound.CheckDepth(src, tomlbound.MaxDepth), &de) && !mutated("init-toml-depth") {
		return toml.MetaData{}, &SyntaxError{Line: de.Line, Col: 1, Msg: fmt.Sprintf(
			"inline tables and arrays nest more than %d deep (the most init reads): write fewer levels", de.Max)}
	}
	return toml.Decode(string(src), v)
}
