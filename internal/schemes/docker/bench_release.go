//go:build !testhooks

package docker

import (
	"context"

	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
)

// benchRows are in test builds only (bench_testhooks.go): the release binary carries no benchmark.
var benchRows func(context.Context, *scheme.BenchRun) error
