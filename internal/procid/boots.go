package procid

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/xdg"
)

// Another boot id with this machine's id is not proof of a dead process: machine ids are
// shared by clones (a VM template that kept /etc/machine-id, an image that baked
// /var/lib/dbus/machine-id), and a twin's live serve has a boot id of its own (attack round
// atk37b, F5). So every serve notes the boot it runs in, in this user's state, and another
// boot is judged dead only when this machine's own record shows it: a boot this disk ran.

// maxBoots bounds the record (the oldest go first: a boot that old left little to remove).
const maxBoots = 256

// bootsFile is $XDG_STATE_HOME/mcpsandbox/boots (or ~/.local/state/...); "" when no home.
func bootsFile() string {
	d := xdg.Dir("XDG_STATE_HOME")
	if d == "" {
		home, err := os.UserHomeDir()
		if err != nil || !filepath.IsAbs(home) {
			return ""
		}
		d = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(d, "mcpsandbox", "boots")
}

// readBoots is the record, one boot id a line (nil when none or unreadable).
func readBoots(p string) []string {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(io.LimitReader(f, 64<<10))
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); validBoot(s) {
			out = append(out, s)
		}
	}
	return out
}

// validBoot: a boot id is a UUID's letters (the kernel's form); anything else in the file is
// not ours and is ignored.
func validBoot(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-') {
			return false
		}
	}
	return true
}

// NoteBoot records that this machine ran the boot id (Self notes the current one; best
// effort: without a record no other boot is judged dead, which is the safe side).
func NoteBoot(id string) error {
	p := bootsFile()
	if p == "" || !validBoot(id) {
		return nil
	}
	have := readBoots(p)
	for _, b := range have {
		if b == id {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	have = append(have, id)
	if len(have) > maxBoots {
		have = have[len(have)-maxBoots:]
	}
	var buf bytes.Buffer
	for _, b := range have {
		buf.WriteString(b + "\n")
	}
	// a whole new file renamed over the old: two serves starting together lose at most one
	// line, never the file
	tmp, err := os.CreateTemp(filepath.Dir(p), ".boots-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// ranHere says whether this machine's record shows the boot id.
func ranHere(id string) bool {
	if mutated("procid-other-boot-dead") {
		return true
	}
	p := bootsFile()
	if p == "" {
		return false
	}
	for _, b := range readBoots(p) {
		if b == id {
			return true
		}
	}
	return false
}
