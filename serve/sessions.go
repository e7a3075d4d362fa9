package serve

import (
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

type sessionState struct {
	id    string
	ended sync.Once
}

// sessions holds serve's id for each live session: the transport's own (stdio's line
// connection, HTTP's Mcp-Session-Id) or a fresh one where it has none (in-memory transports),
// so per-session state never mixes two sessions. An entry is added at a session's first call
// (or, over HTTP, at its initialize) and removed by EndSession when the session ends, however it
// ends (client gone, DELETE, idle expiry, shutdown): it holds no more than the live sessions,
// which over HTTP are capped (limits.max_sessions).
var sessions sync.Map // *mcp.ServerSession -> *sessionState

func track(ss *mcp.ServerSession) (*sessionState, bool) {
	if st, ok := sessions.Load(ss); ok {
		return st.(*sessionState), false
	}
	id := ss.ID()
	if id == "" {
		id = newID()
	}
	st, loaded := sessions.LoadOrStore(ss, &sessionState{id: id})
	return st.(*sessionState), !loaded
}

// SessionID is the id serve uses for a session in calls, audit entries and EndSession.
func SessionID(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	st, _ := track(ss)
	return st.id
}

// EndSession tells the executor, once, that a session is over, and forgets it. A second
// caller waits until the first has finished; a session serve never tracked has nothing to end.
func EndSession(ex executor.Executor, ss *mcp.ServerSession) {
	v, ok := sessions.Load(ss)
	if !ok {
		return
	}
	st := v.(*sessionState)
	st.ended.Do(func() {
		if e, ok := ex.(executor.SessionEnder); ok {
			e.EndSession(st.id)
		}
	})
	sessions.Delete(ss)
}
