#!/usr/bin/env python3
"""F4c: the same class beyond `venv`: package trees and rc files the host loads without being asked, protected only
under one name (.venv, node_modules): write_file alone, policy /tmp/atk40/wc.toml (only wc pinned; made by setup.sh)."""
import sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
s = Stdio(["/tmp/atk40/mcpsandbox", "serve", "--policy", "/tmp/atk40/wc.toml"], env={"HOME": "/tmp/atk40/home", "PATH": "/usr/bin:/bin"}, err="/tmp/atk40/f4c.log")
for path, why in [
    ("env/lib/python3.11/site-packages/zz.pth", "a venv named env (pyvenv.cfg beside it would make it one)"),
    (".tox/py311/lib/python3.11/site-packages/zz.pth", "tox's venv: every `tox` run starts it"),
    ("__pypackages__/3.11/lib/zz.pth", "PEP 582 / pdm's package dir"),
    (".yarn/unplugged/lodash-npm-4.17.21-x/node_modules/lodash/lodash.js", "Yarn PnP's unplugged packages (node_modules' place)"),
    (".yarn/cache/lodash-npm-4.17.21-6382451519-eb835a2e51.zip", "Yarn PnP's package archives, loaded by .pnp.cjs"),
    (".yarn/sdks/typescript/lib/tsserver.js", "the TS server VS Code starts for a PnP project (typescript.tsdk)"),
    (".ocamlinit", "the OCaml toplevel (ocaml, utop) runs ./.ocamlinit (.ghci, .irbrc are protected)"),
    ("vendor/autoload.php", "Composer's vendor dir (node_modules' PHP twin): every PHP run of the project loads it"),
    ("vendor/composer/installed.json", "Composer reads it to load plugins from vendor/ on every composer command"),
    ("vendor/bundle/ruby/3.1.0/gems/rake-13.0.6/lib/rake.rb", "bundler's in-project gems (BUNDLE_PATH vendor/bundle): bundle exec, ruby-lsp"),
    ("node_modules/x/index.js", "contrast: node_modules (protected)"),
    (".venv/lib/python3.11/site-packages/zz.pth", "contrast: .venv (protected)"),
]:
    r = text(s.call("write_file", {"path": path, "content": "print('x')\n"}))
    verdict = "APPLIED" if "applied" in r and "refused" not in r else "refused"
    print(f"{verdict:8} {path}  -- {why}")
s.close()
