package sandbox

import (
	"io"
	"path/filepath"
	"slices"
	"strings"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// newRelay is the relay for a policy between o's client and the server's stdin.
func newRelay(p *policy.Policy, al *audit.Log, o Options, session string, toServer io.Writer) *relay {
	r := &relay{tools: wrapsec.Of(p).Tools, mayAsk: wrapsec.Of(p).Copy().(*wrapsec.Wrap).ServerMayAsk, timeout: p.Limits.Timeout.Duration, audit: al, server: p.Name, hash: p.Hash(),
		session: session, log: o.Logger, inflight: map[string]*pending{}, expired: map[string]struct{}{}, heard: make(chan struct{}), patience: startPatience}
	r.toClient.w, r.toServer.w = o.Stdout, toServer
	if o.ExplainDenials {
		r.explain = o.Stderr
		r.writeNotes = map[string]string{}
		for _, d := range wrapsec.Of(p).Write {
			if note, fix := WriteDirNote(d); note != "" {
				r.writeNotes[filepath.Clean(d)] = note + ": " + fix
			}
		}
		for _, d := range wrapsec.Of(p).Read {
			d = filepath.Clean(d)
			if !slices.ContainsFunc(wrapsec.Of(p).Write, func(w string) bool { return within(d, filepath.Clean(w)) }) {
				r.readOnly = append(r.readOnly, d)
			}
		}
	}
	return r
}

// within says whether path is dir or beneath it.
func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}
