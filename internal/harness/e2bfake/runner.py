# e2bfake's stand-in for a Jupyter cell: run the code, print the value of a final expression as
# the cell's result and report an exception as name/value/traceback, as JSON lines on fd 3.
# display(obj) and the final expression carry the object's rich representations as IPython's
# formatters find them (_repr_png_, _repr_jpeg_: bytes, sent base64; _repr_svg_: text), the way
# E2B's interpreter sends display_data and execute_result.
# Only modules of python3-minimal (no json): CI installs nothing more.
import ast, binascii, os, sys, traceback


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
        parts.append(js(k) + ":" + ("true" if v is True else "false" if v is False else js(v)))
    ev.write("{" + ",".join(parts) + "}\n")


def formats(v):
    out = {"text": repr(v)}
    for key, meth in (("png", "_repr_png_"), ("jpeg", "_repr_jpeg_"), ("svg", "_repr_svg_")):
        f = getattr(v, meth, None)
        if f is None or isinstance(v, type):
            continue
        d = f()
        if d is None:
            continue
        if key == "svg":
            out[key] = d if isinstance(d, str) else d.decode("utf-8")
        elif isinstance(d, (bytes, bytearray)):
            out[key] = binascii.b2a_base64(bytes(d), newline=False).decode("ascii")
        else:
            out[key] = d  # already base64, as IPython accepts
    return out


def display(*objs):
    sys.stdout.flush()
    sys.stderr.flush()
    for o in objs:
        event(type="result", is_main_result=False, **formats(o))
    ev.flush()


ev = os.fdopen(3, "w", encoding="utf-8")
src = open(sys.argv[1], encoding="utf-8").read()
g = {"__name__": "__main__", "display": display}
try:
    tree = ast.parse(src, "<cell>", "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, "<cell>", "exec"), g)
    if last is not None:
        v = eval(compile(last, "<cell>", "eval"), g)
        if v is not None:
            event(type="result", is_main_result=True, **formats(v))
except BaseException as e:
    sys.stdout.flush()
    sys.stderr.flush()
    tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
    event(type="error", name=type(e).__name__, value=str(e),
          traceback="".join(traceback.format_exception(type(e), e, tb)))
ev.flush()
