package sandbox

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// Data records: how a container's wrapper or session supervisor hands serve data that is not
// the program's output (the pictures of a call, a file tool's answer). A record is written on
// stdout, before the end mark, as
//
//	mcpsandbox-data:NONCE:FIELD,FIELD,...\n
//
// where each field is base64 (standard alphabet) or a decimal number: a record holds only
// [A-Za-z0-9+/=,] and ends at the first other byte, so nothing after it (the end mark
// included) can hide in it. dataTap takes records out of the stream before the mark writer (they
// count neither as output nor against limits.max_output_bytes) and keeps them within a byte
// budget and a record count fixed by serve before the call: the container is hostile, it may
// write records of any size or number, and serve never holds more than budget bytes of them.
// A record that passes the budget is dropped whole and the tap says so (overflow).
const dataPrefix = "mcpsandbox-data:"

// maxRecords bounds the records one tap keeps (the rest are counted and dropped).
const maxRecords = 32

type dataTap struct {
	mu       sync.Mutex
	next     io.Writer
	token    []byte
	held     []byte // a tail that could begin the token
	in       bool   // inside a record
	cur      []byte
	curOver  bool
	budget   int // bytes of records still allowed
	records  [][]byte
	dropped  int // records dropped (over the budget or the count)
	overflow bool
}

func newDataTap(next io.Writer, nonce string, budget int) *dataTap {
	if mutated("docker-data-unbounded") {
		budget = 1 << 40
	}
	return &dataTap{next: next, token: []byte(dataPrefix + nonce + ":"), budget: budget}
}

func recordByte(c byte) bool {
	if mutated("docker-data-frame") {
		return c != '\n'
	}
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' || c == ','
}

func (t *dataTap) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	data := p
	if len(t.held) > 0 {
		data = append(t.held, p...)
		t.held = nil
	}
	for len(data) > 0 {
		if t.in {
			data = t.record(data)
			continue
		}
		i := bytes.Index(data, t.token)
		if i < 0 {
			keep := 0
			for k := min(len(t.token)-1, len(data)); k > 0; k-- {
				if bytes.HasPrefix(t.token, data[len(data)-k:]) {
					keep = k
					break
				}
			}
			t.next.Write(data[:len(data)-keep])
			t.held = append([]byte(nil), data[len(data)-keep:]...)
			break
		}
		t.next.Write(data[:i])
		data = data[i+len(t.token):]
		t.in, t.cur, t.curOver = true, nil, false
	}
	return len(p), nil
}

// record consumes data inside a record and returns what follows it.
func (t *dataTap) record(data []byte) []byte {
	n := 0
	for n < len(data) && recordByte(data[n]) {
		n++
	}
	if !t.curOver {
		if len(t.cur)+n > t.budget || len(t.records) >= maxRecords {
			t.curOver, t.cur = true, nil
		} else {
			t.cur = append(t.cur, data[:n]...)
		}
	}
	if n == len(data) {
		return nil
	}
	t.end()
	if data[n] == '\n' {
		n++ // the record's own newline
	}
	return data[n:]
}

func (t *dataTap) end() {
	if t.curOver {
		t.dropped++
		t.overflow = true
	} else {
		t.budget -= len(t.cur)
		t.records = append(t.records, t.cur)
	}
	t.in, t.cur, t.curOver = false, nil, false
}

// flush passes on what is held back and ends an open record (the stream ended).
func (t *dataTap) flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.in {
		t.end()
	}
	if len(t.held) > 0 {
		t.next.Write(t.held)
		t.held = nil
	}
}

// take returns the records kept, split into fields, and how many were dropped.
func (t *dataTap) take() ([][][]byte, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([][][]byte, 0, len(t.records))
	for _, r := range t.records {
		out = append(out, bytes.Split(r, []byte(",")))
	}
	return out, t.dropped
}

// b64Len is the base64 length of n bytes.
func b64Len(n int64) int { return int(base64.StdEncoding.EncodedLen(int(n))) }

// imageBudget bounds the records of a call's pictures: the pictures serve may send, and a
// name and size for each of the others.
var imageBudget = b64Len(executor.MaxImagesBytes) + maxRecords*1024

// outputsDir is where a call's program leaves the pictures it wants shown (PNG, JPEG, GIF, WebP,
// SVG): created empty for each call (call mode: a fresh container; session mode: the supervisor
// empties it after each call, having sent its pictures).
const outputsDir = "/tmp/outputs"

// imagesOf reads a call's picture records ("i,NAME,SIZE,DATA": DATA empty when the wrapper did
// not send the file, past a bound; "n,COUNT": files it did not even describe) into pictures,
// bounded by executor.BoundImages, and a note for what was left out.
func imagesOf(t *dataTap) ([]executor.Image, string) {
	recs, dropped := t.take()
	var imgs []executor.Image
	more, bad := dropped, 0
	var badNames []string // named in the note (trial34 F5), the first few
	for _, r := range recs {
		switch {
		case len(r) == 2 && string(r[0]) == "n":
			if n, err := strconv.Atoi(string(r[1])); err == nil && n > 0 && n < 1<<30 {
				more += n
			}
		case len(r) == 4 && string(r[0]) == "i":
			name, err1 := base64.StdEncoding.DecodeString(string(r[1]))
			data, err2 := base64.StdEncoding.DecodeString(string(r[3]))
			size, err3 := strconv.ParseInt(string(r[2]), 10, 64)
			if err1 != nil || err2 != nil || err3 != nil || len(name) > 1024 {
				bad++
				continue
			}
			if len(data) == 0 && size > 0 {
				imgs = append(imgs, executor.Image{Name: string(name), Size: size,
					Omitted: fmt.Sprintf("not sent: %d bytes (as the container says), over the %d-byte bound of one picture or of a call's pictures (read it with read_file)", size, executor.MaxImageBytes)})
				continue
			}
			im := executor.NewImage(string(name), data)
			if im.MIMEType == "" {
				bad++
				if len(badNames) < 5 {
					badNames = append(badNames, strconv.Quote(string(name)))
				}
				continue
			}
			imgs = append(imgs, im)
		default:
			bad++
		}
	}
	imgs = executor.BoundImages(imgs)
	note := ""
	if more > 0 {
		note = fmt.Sprintf("%s in %s %s not returned (a call returns at most %d pictures)", files(more, "more file", "more files"), outputsDir, wasWere(more), executor.MaxImages)
	}
	if bad > 0 {
		if note != "" {
			note += "; "
		}
		note += fmt.Sprintf("%s in %s %s not %s (PNG, JPEG, GIF, WebP, SVG) and not returned", files(bad, "file", "files"), outputsDir, wasWere(bad), map[bool]string{true: "a picture", false: "pictures"}[bad == 1])
		if len(badNames) > 0 {
			note += ": " + strings.Join(badNames, ", ")
			if bad > len(badNames) {
				note += ", …"
			}
		}
	}
	return imgs, note
}

// files is "1 " + one or "N " + many.
func files(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// addImages puts a call's pictures in its result, and a note on stderr for what was left out.
func addImages(res *executor.Result, t *dataTap) {
	if res == nil || t == nil {
		return
	}
	imgs, note := imagesOf(t)
	res.Images = imgs
	if note != "" {
		if res.Stderr != "" && res.Stderr[len(res.Stderr)-1] != '\n' {
			res.Stderr += "\n"
		}
		res.Stderr += "[mcpsandbox: " + note + "]\n"
	}
}

// retarget points a tap made before its call's nonce was known at the call's mark writer.
func (t *dataTap) retarget(next io.Writer, nonce string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next, t.token = next, []byte(dataPrefix+nonce+":")
}

// picturesNote tells the model, in the run tools' descriptions, how to show a picture.
const picturesNote = "Pictures (PNG, JPEG, GIF, WebP, SVG) the program writes to " + outputsDir + " come back as images with the call's result."
