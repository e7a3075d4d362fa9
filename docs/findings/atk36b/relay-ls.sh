#!/bin/bash
# atk36b F3: wrap's stderr relay passes U+2028 (line separator) and U+202E (right-to-left override)
# through: a server line splits, in a viewer that breaks on U+2028, into one that reads as wrap's own.
# Needs /tmp/atk36b/mcpsandbox. Writes under /tmp/atk36b/w.
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p /tmp/atk36b/w && cd /tmp/atk36b/w || exit 1
cp "$HERE/ls-server.sh" srv.sh && chmod 755 srv.sh
printf 'version = 1\nscheme = "wrap"\n[wrap]\ncommand = ["/tmp/atk36b/w/srv.sh"]\n' > p.toml
timeout 20 /tmp/atk36b/mcpsandbox wrap --policy p.toml </dev/null 2>err.txt
echo "--- wrap's stderr, raw:"; cat err.txt
echo "--- as Python's str.splitlines() reads it (a log viewer that breaks on U+2028):"
python3 -c 'import sys; [print(repr(l)) for l in open("err.txt", encoding="utf-8").read().splitlines()]'
cd / && rm -rf /tmp/atk36b/w
