import subprocess

from flask import Flask, request

app = Flask(__name__)


def pick[T = str](values: list[T], index: int = 0) -> T:
    return values[index]


@app.route("/pick")
def pick_view():
    chosen = pick([request.args["a"], "b"])
    subprocess.run(f"echo {chosen}", shell=True)  # vulnerable: command


@app.route("/pick-second")
def pick_second():
    chosen = pick([request.args["a"], "b"], 1)
    subprocess.run(f"echo {chosen}", shell=True)  # safe: command


@app.route("/nested")
def nested():
    who = request.args["who"]
    return f"{f"{f"<b>{who}</b>"}"}"  # vulnerable: xss
