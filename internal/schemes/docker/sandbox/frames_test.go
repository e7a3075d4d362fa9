package sandbox

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// The data tap takes records out of the stream (split anywhere across writes), passes the rest
// on, ends a record at its first foreign byte (so a mark after it is still seen), and keeps no
// more than its budget: a record past it is dropped whole, however long.
func TestDataTap(t *testing.T) {
	const nonce = "abc"
	png := []byte("\x89PNG\r\n\x1a\nrest")
	stream := "hello mcpsandbox-da" + "ta:abc:i," + base64.StdEncoding.EncodeToString([]byte("a.png")) + ",12," +
		base64.StdEncoding.EncodeToString(png) + "\nworld\nmcpsandbox-data:zzz:x\nmcpsandbox-data:abc:n,3:mcpsandbox-end:abc:0:0\n"
	for _, chunk := range []int{1, 2, 7, 1000} {
		out := &executor.CapBuffer{Limit: 1 << 20}
		tap := newDataTap(out, nonce, 1<<20)
		for i := 0; i < len(stream); i += chunk {
			tap.Write([]byte(stream[i:min(i+chunk, len(stream))]))
		}
		tap.flush()
		if want := "hello world\nmcpsandbox-data:zzz:x\n:mcpsandbox-end:abc:0:0\n"; out.String() != want {
			t.Fatalf("chunk %d: passed on %q, want %q", chunk, out.String(), want)
		}
		res := &executor.Result{}
		addImages(res, tap)
		if len(res.Images) != 1 || !bytes.Equal(res.Images[0].Data, png) || res.Images[0].MIMEType != "image/png" || res.Images[0].Name != "a.png" {
			t.Fatalf("chunk %d: images %+v", chunk, res.Images)
		}
		if !strings.Contains(res.Stderr, "3 more files") {
			t.Fatalf("chunk %d: note %q", chunk, res.Stderr)
		}
	}

	// A record over the budget, fed in pieces far larger in total than the budget: dropped, and
	// the tap never holds more than the budget.
	out := &executor.CapBuffer{Limit: 1 << 10}
	tap := newDataTap(out, nonce, 4096)
	tap.Write([]byte("mcpsandbox-data:abc:i,YQ==,1,"))
	piece := bytes.Repeat([]byte("QUFB"), 1<<14)
	for range 64 {
		tap.Write(piece)
		if held := len(tap.cur); held > 4096 {
			t.Fatalf("the tap holds %d bytes of a record, over its 4096-byte budget", held)
		}
	}
	tap.Write([]byte("\nmcpsandbox-data:abc:n,1\n"))
	recs, dropped := tap.take()
	if dropped != 1 || len(recs) != 1 || string(recs[0][0]) != "n" {
		t.Fatalf("records %q, dropped %d: want the small one kept, the large one dropped", recs, dropped)
	}
	// The record count is bounded too.
	tap = newDataTap(out, nonce, 1<<20)
	for i := range 100 {
		fmt.Fprintf(tap, "mcpsandbox-data:abc:n,%d\n", i)
	}
	if recs, dropped := tap.take(); len(recs) != maxRecords || dropped != 100-maxRecords {
		t.Fatalf("%d records kept, %d dropped", len(recs), dropped)
	}
}

// imagesOf keeps only pictures, describes the ones the container did not send, and bounds them.
func TestImagesOf(t *testing.T) {
	tap := newDataTap(&executor.CapBuffer{Limit: 10}, "n", imageBudget)
	b := base64.StdEncoding.EncodeToString
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 1<<20)...)
	for i := range 10 {
		fmt.Fprintf(tap, "mcpsandbox-data:n:i,%s,%d,%s\n", b([]byte(fmt.Sprint(i, ".png"))), len(png), b(png))
	}
	fmt.Fprintf(tap, "mcpsandbox-data:n:i,%s,%d,\n", b([]byte("huge.png")), 50<<20)
	fmt.Fprintf(tap, "mcpsandbox-data:n:i,%s,3,%s\n", b([]byte("notes.txt")), b([]byte("abc")))
	fmt.Fprintf(tap, "mcpsandbox-data:n:i,!!,3,%s\n", b([]byte("abc")))
	tap.flush()
	imgs, note := imagesOf(tap)
	sent, total := 0, 0
	for _, im := range imgs {
		if im.Data != nil {
			sent++
			total += len(im.Data)
		}
	}
	if sent > executor.MaxImages || total > executor.MaxImagesBytes || sent == 0 {
		t.Fatalf("%d pictures sent, %d bytes", sent, total)
	}
	if last := imgs[len(imgs)-1]; last.Name != "huge.png" || last.Omitted == "" || last.Size != 50<<20 {
		t.Fatalf("the large file: %+v", last)
	}
	if !strings.Contains(note, "2 files in /tmp/outputs were not pictures") || !strings.Contains(note, "not pictures") || !strings.Contains(note, `: "notes.txt"`) {
		t.Fatalf("note %q", note)
	}
	// one: said in the singular, and named (trial34 F5: "1 files … were not pictures")
	tap = newDataTap(&executor.CapBuffer{Limit: 10}, "n", imageBudget)
	fmt.Fprintf(tap, "mcpsandbox-data:n:i,%s,3,%s\n", b([]byte("notes.txt")), b([]byte("abc")))
	tap.flush()
	if _, note := imagesOf(tap); note != `1 file in /tmp/outputs was not a picture (PNG, JPEG, GIF, WebP, SVG) and not returned: "notes.txt"` {
		t.Errorf("one file: %q", note)
	}
}

// The answers of a session's container are checked for form, whatever it wrote: wrong field
// counts, bad base64, negative sizes and too many entries are refused; read_file keeps at most
// max bytes and never reports a size below what came.
func TestSessionFileAnswers(t *testing.T) {
	split := func(s string) [][]byte { return bytes.Split([]byte(s), []byte(",")) }
	b := base64.StdEncoding.EncodeToString
	for _, bad := range []string{"5", "x," + b([]byte("ab")), "-1," + b([]byte("ab")), "2,!!", "2,QQ=,x"} {
		if _, _, err := parseRead(split(bad), 10); err == nil {
			t.Errorf("read answer %q taken", bad)
		}
	}
	data, size, err := parseRead(split("1,"+b([]byte("abcdefghijkl"))), 5)
	if err != nil || string(data) != "abcde" || size != 12 {
		t.Errorf("read: %q %d %v", data, size, err)
	}
	for _, bad := range []string{"", "x", "-1", "0," + b([]byte("a")) + ",f", "0," + b([]byte("a")) + ",q,1", "0,,f,1", "0," + b([]byte("a")) + ",f,-2"} {
		if _, _, err := parseList(split(bad)); err == nil {
			t.Errorf("list answer %q taken", bad)
		}
	}
	many := "0" + strings.Repeat(","+b([]byte("a"))+",f,1", executor.MaxListEntries+1)
	if _, _, err := parseList(split(many)); err == nil {
		t.Error("a list of more than MaxListEntries entries taken")
	}
	es, more, err := parseList(split("7," + b([]byte("x.txt")) + ",f,3," + b([]byte("d")) + ",d,0"))
	if err != nil || more != 7 || len(es) != 2 || es[0] != (executor.FileEntry{Name: "x.txt", Type: "file", Size: 3}) || es[1].Type != "dir" {
		t.Errorf("list: %+v %d %v", es, more, err)
	}
}
