import sys, json, os
sys.path.insert(0, "/work/notes/atk32")
import stdio
s = stdio.Stdio("/tmp/atk32x/pol.toml")
r = s.py("import os\nopen('ls','w').write('#!/bin/sh\\necho pwned\\n')\nos.chmod('ls',0o755)\n")
print(json.dumps(stdio.sc(r).get("workspace")))
print(oct(os.stat("/tmp/atk32x/ws/ls").st_mode))
