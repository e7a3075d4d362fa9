package httpbound

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"
)

func TestBudgetChargesDeclaredAndStreamedBodies(t *testing.T) {
	b := NewBudget(1 << 20)
	req := func(n int, chunked bool) *http.Request {
		r, _ := http.NewRequest(http.MethodPost, "/", bytes.NewReader(make([]byte, n)))
		if chunked {
			r.ContentLength = -1
		}
		return r
	}
	small, ok := b.Charge(req(FreeBody, false), 4<<20)
	if !ok || b.Used() != 0 {
		t.Fatalf("a small body is free: ok=%v used %d", ok, b.Used())
	}
	big, ok := b.Charge(req(900<<10, false), 4<<20)
	if !ok {
		t.Fatal("the first big body was refused")
	}
	if want := int64(HeldPerByte * (900<<10 - FreeBody)); b.Used() != want {
		t.Fatalf("a 900 KiB body is charged %d, want %d: %d times its bytes past the free part, what it holds decoded", b.Used(), want, HeldPerByte)
	}
	if _, ok := b.Charge(req(300<<10, false), 4<<20); ok {
		t.Fatalf("a declared body over the budget was accepted (used %d of %d)", b.Used(), b.Max())
	}
	r := req(400<<10, true)
	rel, ok := b.Charge(r, 4<<20)
	if !ok {
		t.Fatal("a chunked body is charged as read, not refused up front")
	}
	if _, err := io.Copy(io.Discard, r.Body); !errors.Is(err, ErrBodyBudget) {
		t.Fatalf("reading a chunked body past the budget: %v", err)
	}
	rel()
	big()
	small()
	if b.Used() != 0 {
		t.Fatalf("%d bytes still charged after every request ended", b.Used())
	}
	r = req(200<<10, true)
	rel, _ = b.Charge(r, 4<<20)
	if n, err := io.Copy(io.Discard, r.Body); err != nil || n != 200<<10 {
		t.Fatalf("a chunked body within the budget: %d %v", n, err)
	}
	if want := int64(HeldPerByte * (200<<10 - FreeBody)); b.Used() != want {
		t.Fatalf("a chunked 200 KiB body is charged %d as read, want %d", b.Used(), want)
	}
	rel()
}
