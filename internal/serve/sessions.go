package serve

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

type sessionState struct {
	id    string
	ended sync.Once
	done  context.Context // over when the session ends: its calls still waiting for a slot are refused
	end   context.CancelFunc
}

// ending ends done: from the session's end, or as soon as its client asks to end it (an HTTP
// DELETE, which the SDK answers only once the calls it carried are over: those waiting for a
// slot are then refused instead of run for a client that has gone: atk34 N1).
func (st *sessionState) ending() {
	if !mutated("session-end-queued-runs") {
		st.end()
	}
}

// endingByID is ending for the tracked session with this id (an HTTP Mcp-Session-Id).
func (t *sessionTable) endingByID(id string) {
	t.m.Range(func(_, v any) bool {
		if st := v.(*sessionState); st.id == id {
			st.ending()
			return false
		}
		return true
	})
}

// sessionTable holds one server's id for each of its live sessions: the transport's own (stdio's
// line connection, HTTP's Mcp-Session-Id) or a fresh one where it has none (in-memory
// transports), so per-session state never mixes two sessions. An entry is added at a session's
// first call (or, over HTTP, at its initialize) and removed by end when the session ends, however
// it ends (client gone, DELETE, idle expiry, shutdown): it holds no more than the server's live
// sessions, which over HTTP are capped (limits.max_sessions). Each server (runner) owns its own
// table, so two servers in one process never share one.
type sessionTable struct {
	m sync.Map // *mcp.ServerSession -> *sessionState
}

// track is ss's state, added if ss was not tracked yet (first).
func (t *sessionTable) track(ss *mcp.ServerSession) (st *sessionState, first bool) {
	if st, ok := t.m.Load(ss); ok {
		return st.(*sessionState), false
	}
	id := ss.ID()
	if id == "" {
		id = newID()
	}
	done, end := context.WithCancel(context.Background())
	v, loaded := t.m.LoadOrStore(ss, &sessionState{id: id, done: done, end: end})
	if loaded {
		end()
	}
	return v.(*sessionState), !loaded
}

// id is the id serve uses for a session in calls, audit entries and end.
func (t *sessionTable) id(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	st, _ := t.track(ss)
	return st.id
}

// end tells the executor, once, that a session is over, and forgets it. A second caller waits
// until the first has finished; a session this table never tracked has nothing to end.
func (t *sessionTable) end(ex executor.Executor, ss *mcp.ServerSession) {
	v, ok := t.m.Load(ss)
	if !ok {
		return
	}
	st := v.(*sessionState)
	st.ended.Do(func() {
		st.ending()
		if e, ok := ex.(executor.SessionEnder); ok {
			e.EndSession(st.id)
		}
	})
	t.m.Delete(ss)
}

// done is over when ss ends (nil for no session).
func (t *sessionTable) done(ss *mcp.ServerSession) context.Context {
	if ss == nil {
		return nil
	}
	st, _ := t.track(ss)
	return st.done
}

// len is how many sessions the table tracks.
func (t *sessionTable) len() int {
	n := 0
	t.m.Range(func(any, any) bool { n++; return true })
	return n
}
