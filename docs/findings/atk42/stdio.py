# The attack rounds' shared MCP stdio client is docs/findings/lib/mcpstdio.py (this round's copy was the same file).
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from mcpstdio import *  # noqa: F401,F403 (as the copy did: Stdio, text and its json, os, subprocess, sys)
