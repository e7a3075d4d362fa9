#!/bin/sh
# policy.CodeLoadingEnv / MS116: an allowlist.env value naming a workspace file by a bare relative path (no ./), and
# loader variables not on the list. verify --no-harness on each; serve's parse is the same code (CodeLoadingEnv).
cd /tmp/atk40b
for kv in 'PAGER = "./tools/pager"' 'PAGER = "tools/pager"' 'GIT_DIR = "meta"' 'MAKEFILES = "ci/extra.mk"' 'WGETRC = "conf/wgetrc"' 'CURL_HOME = "conf"' 'BUNDLE_GEMFILE = "Gemfile.ci"' 'KRB5_CONFIG = "conf/krb5.conf"' 'GST_PLUGIN_PATH = "/tmp/atk40b/ws/plugins"' 'PYTHONWARNINGS = "ignore::mywarn.W"' 'PYTHONPYCACHEPREFIX = "cache"' 'EDITOR = "tools/ed"'; do
  sed -n '1,/^\[allowlist\]/p' wc.toml > env.toml
  printf 'workspace = "/tmp/atk40b/ws"\nnetwork = false\nenv = { %s }\n' "$kv" >> env.toml
  sed -n '/^\[\[allowlist.commands\]\]/,$p' wc.toml >> env.toml
  out=$(./mcpsandbox verify --policy env.toml --no-harness 2>&1)
  echo "$kv => $(echo "$out" | grep -oE 'MS116[^|]{0,90}|env[^|]{0,40}(refus|not allowed|loads)[^|]{0,60}' | head -2 | tr '\n' ' ') verdict: $(echo "$out" | grep -oiE 'verdict[^.]*|^(PASS|FAIL)[^.]*' | head -1)"
done
rm -f env.toml
