#!/bin/sh
# atk38b: remove the scratch the f*.sh scripts leave (and any loop mount f4 left if interrupted).
for m in /tmp/atk38b/f4-*/lfs; do mountpoint -q "$m" 2>/dev/null && umount "$m"; done
rm -rf /tmp/atk38b /tmp/PWNED-atk38b
