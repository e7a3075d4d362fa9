package serve

import (
	"strings"
	"testing"
)

// serve reads a message's keys as the SDK does (only as written): Go's encoding/json also
// matched "Method" and "Id", so {"method":"tools/list","Method":"tools/call",…} passed the
// 64 KiB bound as a tools/call, the SDK handled it as the tools/list it is and quoted its params
// %q-quoted (a 1 MiB body of DEL bytes came back as a 5 MB answer), and {"id":"<big>","Id":8,…}
// had the SDK echo the big id. Red with Go's case-folding decoder (mutant message-keys-as-sdk).
func TestHTTPMessageKeysReadAsTheSDK(t *testing.T) {
	post := liveHTTPSession(t)
	const big = 1 << 20
	for _, c := range []struct{ what, msg, want string }{
		{"a tools/list of 1 MiB calling itself Method tools/call",
			`{"jsonrpc":"2.0","id":2,"method":"tools/list","Method":"tools/call","params":{"cursor":5,"x":"` + strings.Repeat("\x7f", big) + `"}}`, `"id":2`},
		{"an id of 1 MiB beside an Id of 8",
			`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", big) + `","Id":8,"method":"tools/call","params":{"name":"fake","arguments":{}}}`, `"id":null`},
		{"params of 1 MiB beside Params a tools/call takes",
			`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":5,"x":"` + strings.Repeat("\x7f", big) + `"},"Params":{"name":"fake"},"Method":"tools/call"}`, `"id":3`},
	} {
		code, b := post(c.msg)
		if len(b) > 1<<10 || !strings.Contains(b, c.want) || !strings.Contains(b, "-32600") {
			t.Errorf("%s: %d, answer of %d bytes: %.300s", c.what, code, len(b), b)
		}
	}
	if code, b := post(`{"jsonrpc":"2.0","id":9,"method":"ping"}`); code != 200 || !strings.Contains(b, `"id":9`) {
		t.Errorf("a ping after: %d %.300s", code, b)
	}
}
