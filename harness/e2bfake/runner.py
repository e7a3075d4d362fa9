# e2bfake's stand-in for a Jupyter cell: run the code, print the value of a final expression as
# the cell's result and report an exception as name/value/traceback, as JSON lines on fd 3.
# Only modules of python3-minimal (no json): CI installs nothing more.
import ast, os, sys, traceback


def js(s):
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif o < 0x20 or 0xD800 <= o <= 0xDFFF:
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def event(**kv):
    parts = []
    for k, v in kv.items():
        parts.append(js(k) + ":" + ("true" if v is True else js(v)))
    ev.write("{" + ",".join(parts) + "}\n")


ev = os.fdopen(3, "w", encoding="utf-8")
src = open(sys.argv[1], encoding="utf-8").read()
g = {"__name__": "__main__"}
try:
    tree = ast.parse(src, "<cell>", "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, "<cell>", "exec"), g)
    if last is not None:
        v = eval(compile(last, "<cell>", "eval"), g)
        if v is not None:
            event(type="result", text=repr(v), is_main_result=True)
except BaseException as e:
    sys.stdout.flush()
    sys.stderr.flush()
    tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
    event(type="error", name=type(e).__name__, value=str(e),
          traceback="".join(traceback.format_exception(type(e), e, tb)))
ev.flush()
