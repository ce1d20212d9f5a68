import os
import pickle
import subprocess
from collections.abc import Sequence

from fastapi import FastAPI
from flask import Flask, redirect, request, session

app = Flask(__name__)
api = FastAPI()

type Names = Sequence[str]


def first[T](items: Sequence[T]) -> T:
    return items[0]


@app.route("/greet")
def greet():
    user = request.args.get("user", "")
    return f"<p>{user.encode('utf-8').decode('utf-8')}</p>"  # vulnerable: xss


@app.route("/greet-constant")
def greet_constant():
    user = request.args.get("user", "")
    names = {"shown": "guest", "asked": user}
    return f"<p>{names["shown"]}</p>"  # safe: xss


@app.route("/run")
def run():
    tool = request.args.get("tool", "")
    os.system(f"{'/usr/bin/' + tool} --version")  # vulnerable: command


@app.route("/run-fixed")
def run_fixed():
    tool = request.args.get("tool", "")
    level = 4
    if level * 10 > 30:
        tool = "ls"
    os.system(f"{'/usr/bin/' + tool} --version")  # safe: command


@app.route("/first")
def first_file():
    names = request.args.getlist("name")
    return open(f"/srv/{first(names)}").read()  # vulnerable: path


@app.route("/batch", methods=["POST"])
def batch():
    try:
        blob = request.get_data()
        state = pickle.loads(blob)  # vulnerable: deserialization
    except* ValueError:
        state = None
    return str(state is None)


@app.route("/batch-safe", methods=["POST"])
def batch_safe():
    try:
        state = pickle.loads(pickle.dumps({"n": 1}))  # safe: deserialization
    except* ValueError:
        state = None
    return str(state is None)


@app.route("/next")
def next_page():
    match request.args.get("kind", ""):
        case "home":
            target = "/"
        case other:
            target = other
    return redirect(target)  # vulnerable: redirect


@app.route("/next-constant")
def next_constant():
    kind = "home"
    match kind:
        case "home":
            target = "/"
        case _:
            target = request.args["to"]
    return redirect(target)  # safe: redirect


class Store[K, V]:
    def __init__(self) -> None:
        self.items: dict[K, V] = {}

    def keep(self, key: K, value: V) -> V:
        self.items[key] = value
        return value


@app.route("/keep")
def keep():
    value = Store[str, str]().keep("k", request.cookies["v"])
    session["kept"] = value  # vulnerable: trust-boundary


@api.get("/version")
def version(tool: str):
    return subprocess.check_output(f"{tool!r} --version", shell=True)  # vulnerable: command
