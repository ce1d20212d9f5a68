"""The taint engine on small Python files: flows, constant folding, containers, calls followed."""

from __future__ import annotations

from ast_grep_py import SgRoot

from watcher.roles.taint import analyse
from watcher.roles.taint.python import PythonSpec

FLASK = """
import os, subprocess
from flask import Flask, request
app = Flask(__name__)

def helper(v):
    return v.strip()

@app.route("/a")
def a():
    param = request.args.get("x")
    num = 86
    if 7 * 42 - num > 200:
        bar = "constant"
    else:
        bar = param
    subprocess.run(f"echo {bar}", shell=True)
    d = {"keyA": "safe", "keyB": helper(param)}
    os.system("echo " + d["keyA"])
    os.system("echo " + d["keyB"])
"""


def test_a_flow_names_its_class_source_and_path_and_constants_are_not_flows() -> None:
    analysis = analyse(SgRoot(FLASK, "python").root(), PythonSpec())
    assert [(f.sink.name, f.sink.cwe, f.line) for f in analysis.flows] == [("command", 78, 20)]
    flow = analysis.flows[0]
    assert (flow.source.name, flow.source.line) == ("request.args['x']", 11)
    assert "d" in flow.path
    assert analysis.verdicts[17]["command"] == "safe"  # the live arm made ``bar`` a constant
    assert analysis.verdicts[19]["command"] == "safe"  # another key of the dict
    assert (15, 16) in analysis.dead
