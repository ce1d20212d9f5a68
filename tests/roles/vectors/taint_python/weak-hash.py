import hashlib
import hmac

from django.http import HttpResponse
from fastapi import FastAPI
from flask import Flask, make_response, request

app = Flask(__name__)
api = FastAPI()


@app.route("/register", methods=["POST"])
def register():
    password = request.form["password"]
    digest = hashlib.md5(password.encode()).hexdigest()
    with open("passwords.txt", "a") as fh:
        fh.write(digest + "\n")  # vulnerable
    return "ok"


@app.route("/register-strong", methods=["POST"])
def register_strong():
    password = request.form["password"]
    digest = hashlib.sha256(password.encode()).hexdigest()
    with open("passwords.txt", "a") as fh:
        fh.write(digest + "\n")  # safe
    return "ok"


@app.route("/store", methods=["POST"])
def store():
    data = request.form["secret"]
    h = hashlib.new("sha1")
    h.update(data.encode())
    with open("secrets.db", "a") as fh:
        fh.write(h.hexdigest())  # vulnerable
    return "ok"


@app.route("/store-strong", methods=["POST"])
def store_strong():
    data = request.form["secret"]
    h = hashlib.new("sha512")
    h.update(data.encode())
    with open("secrets.db", "a") as fh:
        fh.write(h.hexdigest())  # safe
    return "ok"


@app.route("/etag")
def etag():
    body = "<p>report</p>"
    resp = make_response(body)
    resp.headers["ETag"] = hashlib.md5(body.encode()).hexdigest()  # safe
    return resp


@app.route("/cache")
def cache():
    cache_key = hashlib.md5(request.path.encode()).hexdigest()  # safe
    return {"key_len": len(cache_key)}


@app.route("/token")
def token():
    user = request.args.get("user", "")
    resp = make_response("ok")
    resp.set_cookie("token", hashlib.md5(user.encode()).hexdigest(), secure=True, httponly=True)  # vulnerable
    return resp


@app.route("/token-strong")
def token_strong():
    user = request.args.get("user", "")
    resp = make_response("ok")
    resp.set_cookie("token", hashlib.sha256(user.encode()).hexdigest(), secure=True, httponly=True)  # safe
    return resp


def fingerprint(value):
    return hashlib.sha1(value.encode()).hexdigest()


@app.route("/sent")
def sent():
    return fingerprint(request.args["v"])  # vulnerable


@app.route("/checksum")
def checksum():
    checksum = hashlib.md5(b"static payload").hexdigest()  # safe
    return {"ok": len(checksum) == 32}


def save(request):
    pw = request.POST["pw"]
    password_hash = hashlib.md5(pw.encode()).hexdigest()  # vulnerable
    return HttpResponse("saved" if password_hash else "")


def save_strong(request):
    pw = request.POST["pw"]
    password_hash = hashlib.scrypt(pw.encode(), salt=b"s", n=2**14, r=8, p=1).hex()  # safe
    return HttpResponse("saved" if password_hash else "")


def check(request):
    given = hashlib.md5(request.POST["pw"].encode()).hexdigest()
    request.session["auth_hash"] = given  # vulnerable
    return HttpResponse("ok")


def check_strong(request):
    given = hashlib.sha256(request.POST["pw"].encode()).hexdigest()
    request.session["auth_hash"] = given  # safe
    return HttpResponse("ok")


@api.post("/api-token")
def api_token(name: str):
    token = hashlib.sha1(name.encode()).hexdigest()  # vulnerable
    return {"ok": bool(token)}


@api.post("/api-token-strong")
def api_token_strong(name: str):
    token = hashlib.blake2b(name.encode()).hexdigest()  # safe
    return {"ok": bool(token)}


@api.post("/compare")
def compare(secret: str):
    expected = "5f4dcc3b5aa765d61d8327deb882cf99"
    return {"ok": hmac.compare_digest(expected, hashlib.md5(secret.encode(), usedforsecurity=False).hexdigest())}  # safe


@app.route("/credentials", methods=["POST"])
def credentials():
    with open("creds.txt", "w") as fh:
        fh.writelines([hashlib.md5(request.form["pw"].encode()).hexdigest()])  # vulnerable
    return "ok"


@app.route("/stats")
def stats():
    digest = hashlib.md5(b"daily").hexdigest()  # safe
    return {"len": len(digest)}


@app.route("/session-md5")
def session_md5():
    from flask import session

    session["key"] = hashlib.md5(request.args["k"].encode()).digest()  # vulnerable
    return "ok"


@api.post("/digest-header")
def digest_header(secret: str):
    from fastapi.responses import JSONResponse

    resp = JSONResponse({})
    resp.set_cookie("auth_digest", hashlib.sha1(secret.encode()).hexdigest(), secure=True, httponly=True)  # vulnerable
    return resp
