# e2bfake's stand-in for a Jupyter cell: run the code, print the value of a final expression as
# the cell's result and report an exception as name/value/traceback, as JSON lines on fd 3.
import ast, json, os, sys, traceback

ev = os.fdopen(3, "w")
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
            ev.write(json.dumps({"type": "result", "text": repr(v), "is_main_result": True}) + "\n")
except BaseException as e:
    sys.stdout.flush()
    sys.stderr.flush()
    tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
    ev.write(json.dumps({"type": "error", "name": type(e).__name__, "value": str(e),
                         "traceback": "".join(traceback.format_exception(type(e), e, tb))}) + "\n")
ev.flush()
