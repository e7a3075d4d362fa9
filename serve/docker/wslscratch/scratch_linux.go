// Package wslayer is a TEMPORARY stand-in for serve/wslayer (the lead's), for the docker
// executor's layer plumbing before it lands. Deleted at the merge.
package wslayer

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

func Root() (string, error) {
	d := fmt.Sprintf("/var/tmp/mcpsandbox-layers-%d", os.Getuid())
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", err
	}
	return d, nil
}

type Layer struct{ Dir, Upper, Work, Lower string }

func New(root, lower string) (*Layer, error) {
	d, err := os.MkdirTemp(root, "l-")
	if err != nil {
		return nil, err
	}
	l := &Layer{Dir: d, Upper: filepath.Join(d, "upper"), Work: filepath.Join(d, "work"), Lower: lower}
	st, err := os.Stat(lower)
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(l.Upper, st.Mode().Perm()); err != nil {
		return nil, err
	}
	os.Chmod(l.Upper, st.Mode().Perm())
	if os.Getuid() == 0 {
		s := st.Sys().(*syscall.Stat_t)
		os.Chown(l.Upper, int(s.Uid), int(s.Gid))
	}
	return l, os.Mkdir(l.Work, 0o700)
}

func (l *Layer) OverlayOptions(userxattr bool) string {
	o := "lowerdir=" + l.Lower + ",upperdir=" + l.Upper + ",workdir=" + l.Work + ",redirect_dir=off,index=off,metacopy=off"
	if userxattr {
		o += ",userxattr"
	}
	return o
}

func (l *Layer) Size() (int64, error) {
	var n int64
	err := filepath.WalkDir(l.Upper, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if i, err := d.Info(); err == nil {
				n += i.Size()
			}
		}
		return nil
	})
	return n, err
}

type Changes struct {
	Committed int
	Discarded string
}

type Rules struct {
	Protect     []string
	Quota       int64
	UID, GID    int
	SandboxPath string
}

// Commit: regular files and directories only, whiteouts delete.
func (l *Layer) Commit(r Rules) (*Changes, error) {
	defer os.RemoveAll(l.Dir)
	c := &Changes{}
	err := filepath.WalkDir(l.Upper, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == l.Upper {
			return err
		}
		rel, _ := filepath.Rel(l.Upper, p)
		dst := filepath.Join(l.Lower, rel)
		i, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case i.Mode()&fs.ModeCharDevice != 0 && i.Sys().(*syscall.Stat_t).Rdev == 0:
			c.Committed++
			return os.RemoveAll(dst)
		case d.IsDir():
			os.Mkdir(dst, 0o755)
			if r.UID >= 0 {
				os.Lchown(dst, r.UID, r.GID)
			}
		case d.Type().IsRegular() && i.Mode()&(fs.ModeSetuid|fs.ModeSetgid) == 0:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			os.Remove(dst)
			if err := os.WriteFile(dst, b, i.Mode().Perm()); err != nil {
				return err
			}
			if r.UID >= 0 {
				os.Lchown(dst, r.UID, r.GID)
			}
			c.Committed++
		}
		return nil
	})
	return c, err
}

func (l *Layer) Discard(why string) *Changes {
	os.RemoveAll(l.Dir)
	return &Changes{Discarded: why}
}
