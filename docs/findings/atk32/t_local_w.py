import sys, json
sys.path.insert(0, "/work/notes/atk32")
import stdio
s = stdio.Stdio("/tmp/atk32x/dpol-remote.toml")
r = s.call("run_shell_sandbox", {"script": "mkdir -p .git/hooks && echo 'echo pwn' > .git/hooks/pre-commit && echo x > CLAUDE.md && ln -s /etc/passwd lnk; ls -la"})
print(json.dumps(stdio.sc(r))[:1200])
