import random
import secrets
import string
import uuid

from django.http import HttpResponse
from fastapi import FastAPI, Response
from flask import Flask, make_response, session

app = Flask(__name__)
api = FastAPI()


@app.route("/remember")
def remember():
    key = str(random.random())[2:]
    resp = make_response("ok")
    resp.set_cookie("rememberMe", key, secure=True, httponly=True)  # vulnerable
    return resp


@app.route("/remember-secure")
def remember_secure():
    key = secrets.token_urlsafe(16)
    resp = make_response("ok")
    resp.set_cookie("rememberMe", key, secure=True, httponly=True)  # safe
    return resp


@app.route("/session-id")
def session_id():
    session["sid"] = random.getrandbits(64)  # vulnerable
    return "ok"


@app.route("/session-id-secure")
def session_id_secure():
    session["sid"] = secrets.randbits(64)  # safe
    return "ok"


@app.route("/reset")
def reset():
    token = "".join(random.choice(string.ascii_letters) for _ in range(20))  # vulnerable
    return {"sent": bool(token)}


@app.route("/reset-secure")
def reset_secure():
    token = "".join(secrets.choice(string.ascii_letters) for _ in range(20))  # safe
    return {"sent": bool(token)}


@app.route("/shuffle")
def shuffle():
    deck = list(range(52))
    random.shuffle(deck)
    hand = deck[:5]  # safe
    return {"hand": hand}


@app.route("/dice")
def dice():
    roll = random.randint(1, 6)  # safe
    return {"roll": roll}


def new_password():
    password = str(random.randint(100000, 999999))  # vulnerable
    return password


@app.route("/signup")
def signup():
    return {"temporary": bool(new_password())}


def otp(request):
    code = random.randrange(10**6)
    request.session["otp"] = code  # vulnerable
    return HttpResponse("sent")


def otp_secure(request):
    code = secrets.randbelow(10**6)
    request.session["otp"] = code  # safe
    return HttpResponse("sent")


def nonce_view(request):
    gen = random.Random()
    nonce = gen.random()  # vulnerable
    return HttpResponse(str(nonce))


def nonce_secure(request):
    gen = random.SystemRandom()
    nonce = gen.random()  # safe
    return HttpResponse(str(nonce))


@api.get("/api-key")
def api_key(response: Response):
    value = "%032x" % random.getrandbits(128)
    response.set_cookie("api_key", value, secure=True, httponly=True)  # vulnerable
    return {}


@api.get("/api-key-secure")
def api_key_secure(response: Response):
    value = uuid.uuid4().hex
    response.set_cookie("api_key", value, secure=True, httponly=True)  # safe
    return {}


@api.get("/sample")
def sample():
    picked = random.sample(range(100), 3)  # safe
    return {"picked": picked}


@api.get("/salt")
def salt():
    salt = random.uniform(0, 1)  # vulnerable
    return {"ok": salt > 2}


@api.get("/salt-secure")
def salt_secure():
    salt = secrets.token_hex(8)  # safe
    return {"ok": bool(salt)}


@app.route("/csrf")
def csrf():
    session["csrf_token"] = "%08d" % random.randint(0, 99999999)  # vulnerable
    return "ok"


@app.route("/csrf-secure")
def csrf_secure():
    session["csrf_token"] = secrets.token_hex(16)  # safe
    return "ok"


@app.route("/auth-cookie")
def auth_cookie():
    resp = make_response("ok")
    resp.set_cookie("auth", str(random.random()), secure=True, httponly=True)  # vulnerable
    return resp
