#!/bin/sh
# Recreates the scratch files the atk34 scripts expect (run as root, from anywhere).
set -e
git clone -q /work/main /tmp/atk34 2>/dev/null || true
(cd /tmp/atk34 && CGO_ENABLED=0 go build -o /tmp/atk34/mcpsandbox ./cmd/mcpsandbox)
N=/work/notes/atk34; X=/tmp/atk34x
mkdir -p $X/home/.local/state $X/ur/ws $X/ur/home/.config/mcpsandbox $X/n1/ws $X/n1/home/.config/mcpsandbox
chmod 755 $X $X/ur $X/ur/ws; chmod 777 $X/n1/ws
printf %s "atk34-token-0123456789abcdef0123" > $X/tok; chmod 600 $X/tok
cp $N/sess.toml $N/sess4.toml $N/egcap.toml $N/egsess.toml $X/
[ -f $X/ur/ws/big.bin ]  || { head -c 3000000 /dev/urandom > $X/ur/ws/big.bin;  chmod 644 $X/ur/ws/big.bin; }
[ -f $X/ur/ws/big2.bin ] || { head -c 8000000 /dev/urandom > $X/ur/ws/big2.bin; chmod 644 $X/ur/ws/big2.bin; }
cp $N/unread-policy.toml $X/ur/home/.config/mcpsandbox/policy.toml
cp $N/unread-policy-30s.toml $X/ur/pol30.toml
cp $N/n1-policy.toml $X/n1/home/.config/mcpsandbox/policy.toml
chmod 600 $X/ur/pol30.toml $X/ur/home/.config/mcpsandbox/policy.toml $X/n1/home/.config/mcpsandbox/policy.toml
