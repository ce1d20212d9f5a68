import ast
import re

from django.http import HttpResponse
from fastapi import FastAPI
from flask import Flask, jsonify, request

app = Flask(__name__)
api = FastAPI()
OPERATIONS = {"double": "x * 2", "square": "x * x"}


@app.route("/calc")
def calc():
    expr = request.args.get("expr")
    return str(eval(expr))  # vulnerable


@app.route("/calc-literal")
def calc_literal():
    expr = request.args.get("expr")
    return jsonify(ast.literal_eval(expr))  # safe


@app.route("/calc-checked")
def calc_checked():
    bar = request.args.get("expr", "")
    if not re.fullmatch(r"'[A-Za-z0-9 ]*'", bar):
        return "only quoted words", 400
    eval(bar)  # safe
    return "evaluated"


@app.route("/run", methods=["POST"])
def run():
    body = request.get_json()
    exec(body["code"])  # vulnerable
    return "ran"


@app.route("/run-op", methods=["POST"])
def run_op():
    body = request.get_json()
    name = body["op"]
    if name not in OPERATIONS:
        return "unknown", 400
    return str(eval(name, {"x": 3}))  # safe


@app.route("/compile")
def compile_view():
    source = request.headers.get("X-Source", "")
    code = compile("result = " + source, "<input>", "exec")  # vulnerable
    return str(code)


@app.route("/compile-constant")
def compile_constant():
    source = request.headers.get("X-Source", "")
    source = "1 + 1"
    code = compile("result = " + source, "<input>", "exec")  # safe
    return str(code)


def evaluate(text):
    return eval("(" + text + ")")  # vulnerable


@app.route("/eval-helper")
def eval_helper():
    return str(evaluate(request.cookies["formula"]))


@app.route("/eval-helper-safe")
def eval_helper_safe():
    request.cookies["formula"]
    return str(eval("(2 + 3)"))  # safe


def formula(request):
    text = request.POST["formula"]
    return HttpResponse(str(eval(text)))  # vulnerable


def formula_map(request):
    text = request.POST["formula"]
    table = {"pi": "3.14159", "user": text}
    return HttpResponse(str(eval(table["pi"])))  # safe


def template(request, code):
    exec("value = " + code)  # vulnerable
    return HttpResponse("ok")


def template_int(request, code):
    exec("value = " + str(int(code)))  # safe
    return HttpResponse("ok")


@api.get("/score")
def score(expression: str):
    return {"score": eval(expression)}  # vulnerable


@api.get("/score-number")
def score_number(expression: float):
    return {"score": eval(str(expression))}  # safe


@api.post("/hook")
async def hook(script: str):
    lines = [script]
    for line in lines:
        exec(line)  # vulnerable
    return {}


@api.post("/hook-dead")
async def hook_dead(script: str):
    debug = 0
    while debug:
        exec(script)  # safe
    return {}


@app.route("/plugin")
def plugin():
    module = request.args["module"]
    __import__(module)  # vulnerable
    return "loaded"


@app.route("/plugin-allowed")
def plugin_allowed():
    module = request.args["module"]
    if module == "json":
        __import__(module)  # safe
    return "loaded"


@app.route("/filter")
def filter_rows():
    column = request.args.get("column", "id")
    keep = eval(f"lambda row: row['{column}'] > 0")  # vulnerable
    return str(keep)
