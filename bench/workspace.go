package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// workspaceRows measures the transactional workspace's commit (issue 23): a call's layer with
// one small file, 100 small files, one 50 MB file applied to a workspace, each beside a raw
// baseline that copies the same files into place (write to a new name, rename) with no check.
func workspaceRows(n int, dir string, row func(string, []time.Duration)) error {
	if !wslayer.Supported {
		return fmt.Errorf("the transactional workspace needs Linux")
	}
	root := filepath.Join(dir, "layers")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	cases := []struct {
		what  string
		files int
		size  int
		n     int
	}{
		{"1 small file", 1, 1 << 10, n},
		{"100 small files", 100, 1 << 10, min(n, 50)},
		{"one 50 MB file", 1, 50 << 20, min(n, 10)},
	}
	for _, c := range cases {
		var commit, raw []time.Duration
		for i := range c.n {
			ws := filepath.Join(dir, fmt.Sprintf("ws-%d", i))
			if err := os.MkdirAll(ws, 0o755); err != nil {
				return err
			}
			l, err := wslayer.New(root, ws)
			if err != nil {
				return err
			}
			src := filepath.Join(dir, "src")
			os.RemoveAll(src)
			os.MkdirAll(src, 0o755)
			data := make([]byte, c.size)
			for f := range c.files {
				name := fmt.Sprintf("f%03d.txt", f)
				if err := os.WriteFile(filepath.Join(l.Upper, name), data, 0o644); err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(src, name), data, 0o644); err != nil {
					return err
				}
			}
			t0 := time.Now()
			if _, err := l.Commit(wslayer.Rules{Protect: policy.DefaultProtect, Quota: 1 << 30, UID: -1, GID: -1, SandboxPath: ws}); err != nil {
				return err
			}
			commit = append(commit, time.Since(t0))
			raw2 := filepath.Join(dir, fmt.Sprintf("raw-%d", i))
			os.MkdirAll(raw2, 0o755)
			t0 = time.Now()
			if err := rawCopy(src, raw2); err != nil {
				return err
			}
			raw = append(raw, time.Since(t0))
			os.RemoveAll(ws)
			os.RemoveAll(raw2)
		}
		row("baseline: copy "+c.what+" into a directory (new name + rename, no checks); client: none (Go os calls in process)", raw)
		row("workspace commit: "+c.what+" (checked, applied, layer removed); client: none (wslayer.Commit in process)", commit)
	}
	return nil
}

func rawCopy(src, dst string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		tmp := filepath.Join(dst, ".tmp-"+e.Name())
		out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, err = io.Copy(out, in)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
		}
		in.Close()
		if err == nil {
			err = os.Rename(tmp, filepath.Join(dst, e.Name()))
		}
		if err != nil {
			return err
		}
	}
	return nil
}
