package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/serve"
)

// serve's stderr logger clips every value (the message, a string, an error) to
// serve.MaxLogValue: the SDK logs what a client sent. Red without the clip (mutant
// log-value-clip).
func TestServeLoggerClipsValues(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(&buf, "info")
	big := strings.Repeat("x", 1<<20)
	log.Info(big, "level", big, "err", errors.New(big))
	if n := buf.Len(); n > 4*serve.MaxLogValue {
		t.Errorf("a log line of %d bytes, want at most %d", n, 4*serve.MaxLogValue)
	}
}
