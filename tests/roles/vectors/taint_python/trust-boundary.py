import re

from django.http import HttpResponse
from fastapi import FastAPI, Request
from flask import Flask, g, request, session

app = Flask(__name__)
api = FastAPI()
ROLES = ("viewer", "editor")


@app.route("/remember")
def remember():
    user = request.args.get("user")
    session["user"] = user  # vulnerable
    return "ok"


@app.route("/remember-checked")
def remember_checked():
    user = request.args.get("user", "")
    if not re.fullmatch(r"[a-z0-9_]{3,20}", user):
        return "bad", 400
    session["user"] = user  # safe
    return "ok"


@app.route("/role", methods=["POST"])
def role():
    chosen = request.form["role"]
    session["role"] = chosen  # vulnerable
    return "ok"


@app.route("/role-allowed", methods=["POST"])
def role_allowed():
    chosen = request.form["role"]
    if chosen in ROLES:
        session["role"] = chosen  # safe
    return "ok"


@app.route("/lang")
def lang():
    g.lang = request.cookies.get("lang")  # vulnerable
    return "ok"


@app.route("/lang-default")
def lang_default():
    request.cookies.get("lang")
    g.lang = "en"  # safe
    return "ok"


@app.route("/cart", methods=["POST"])
def cart():
    items = request.get_json()
    session["cart"] = items["list"]  # vulnerable
    return "ok"


@app.route("/cart-count", methods=["POST"])
def cart_count():
    items = request.get_json()
    session["cart_size"] = len(items["list"])  # safe
    return "ok"


def set_theme(value):
    session["theme"] = value  # vulnerable


@app.route("/theme")
def theme():
    set_theme(request.values["theme"])
    return "ok"


@app.route("/theme-constant")
def theme_constant():
    wanted = request.values["theme"]
    picked = {"wanted": wanted, "fallback": "dark"}
    session["theme"] = picked["fallback"]  # safe
    return "ok"


def login(request):
    request.session["username"] = request.POST["username"]  # vulnerable
    return HttpResponse("ok")


def login_checked(request):
    name = request.POST["username"]
    if not name.isalnum():
        return HttpResponse("bad", status=400)
    request.session["username"] = name  # safe
    return HttpResponse("ok")


def visit(request, page):
    request.session["last_page"] = page  # vulnerable
    return HttpResponse("ok")


def visit_number(request, page):
    request.session["last_page"] = int(page)  # safe
    return HttpResponse("ok")


@api.get("/who")
async def who(request: Request, name: str):
    request.session["name"] = name  # vulnerable
    return {}


@api.get("/who-dead")
async def who_dead(request: Request, name: str):
    if len("ab") > 5:
        request.session["name"] = name  # safe
    return {}


@api.get("/state")
async def state(request: Request, token: str):
    request.state.token = token  # vulnerable
    return {}


@api.get("/state-fixed")
async def state_fixed(request: Request, token: int):
    request.state.token = token  # safe
    return {}


@app.route("/flag")
def flag():
    mode = request.headers.get("X-Mode", "")
    session["mode"] = mode.upper()  # vulnerable
    return "ok"


@app.route("/flag-fixed")
def flag_fixed():
    mode = request.headers.get("X-Mode", "")
    session["mode"] = "debug" if mode == "debug" else "normal"  # safe
    return "ok"
