#!/bin/sh
# atk37b F5: internal/procid's Judge (the docker reaper's and now e2b's sweep's rule) says Dead for a serve of
# the same host name and machine id whose boot id differs ("it ran before this machine's last boot"). Two
# live machines share host name AND machine id wherever an image is cloned without regenerating the id:
# VM templates/golden images (systemd's machine-id(5) warns of it), and containers whose image baked
# /var/lib/dbus/machine-id at build time (dbus's postinst) run with the same --hostname on two nodes. Each
# has its own boot id, so each judges the other's live serve Dead, and e2b's start-up sweep kills the other's
# live session sandboxes (atk37 F3's harm; its fix keyed on the machine id). No engine, no E2B: the package is
# copied out of the module and asked directly. Seconds.
set -e
T=/tmp/atk37b/f5; rm -rf $T; mkdir -p $T/procid
cp /work/main/internal/procid/procid.go /work/main/internal/procid/procid_linux.go $T/procid/
sed -i '/mutated(/d' $T/procid/*.go 2>/dev/null || true
cat > $T/go.mod <<'M'
module demo
go 1.22
M
cat > $T/main.go <<'G'
package main

import (
	"fmt"
	"demo/procid"
)

func main() {
	me := procid.Self()
	// the other clone: same image (host name, machine id), its own boot, a live serve there (pid/start
	// mean nothing here)
	other := me
	other.Boot = "5e1f0c3a-0000-4000-8000-000000000001"
	other.PID, other.Start = 4242, 777
	fmt.Printf("me:    host=%s machine=%s boot=%s\n", me.Host, me.Machine, me.Boot)
	fmt.Printf("other: host=%s machine=%s boot=%s (live on the clone)\n", other.Host, other.Machine, other.Boot)
	fmt.Println("Judge(other) =", me.Judge(other))
}
G
cd $T && GOFLAGS=-mod=mod CGO_ENABLED=0 go run . ; rm -rf $T
