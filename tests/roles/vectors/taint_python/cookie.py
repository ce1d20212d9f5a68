from django.http import HttpResponse
from fastapi import FastAPI, Response
from flask import Flask, make_response, request

app = Flask(__name__)
api = FastAPI()


@app.route("/login")
def login():
    resp = make_response("welcome")
    resp.set_cookie("session_id", request.args["sid"])  # vulnerable
    return resp


@app.route("/login-secure")
def login_secure():
    resp = make_response("welcome")
    resp.set_cookie("session_id", request.args["sid"], secure=True, httponly=True, samesite="Lax")  # safe
    return resp


@app.route("/pref")
def pref():
    value = request.cookies.get("pref", "")
    resp = make_response("ok")
    resp.set_cookie("SomeCookie", value, secure=False, httponly=True)  # vulnerable
    return resp


@app.route("/pref-secure")
def pref_secure():
    value = request.cookies.get("pref", "")
    resp = make_response("ok")
    resp.set_cookie("SomeCookie", value, secure=True, httponly=True)  # safe
    return resp


@app.route("/theme")
def theme():
    resp = make_response("ok")
    resp.set_cookie("theme", "dark")  # safe
    return resp


@app.route("/remember")
def remember():
    resp = make_response("ok")
    resp.set_cookie("remember_me", request.form.get("user", ""), httponly=True)  # vulnerable
    return resp


@app.route("/remember-flags")
def remember_flags():
    secure = True
    resp = make_response("ok")
    resp.set_cookie("remember_me", request.form.get("user", ""), secure=secure, httponly=secure)  # safe
    return resp


@app.route("/token")
def token():
    resp = make_response("ok")
    flags = {"secure": False}
    resp.set_cookie("token", request.headers["X-Token"], secure=flags["secure"], httponly=True)  # vulnerable
    return resp


@app.route("/token-dead")
def token_dead():
    resp = make_response("ok")
    if 0:
        resp.set_cookie("token", request.headers["X-Token"])  # safe
    return resp


def django_login(request):
    resp = HttpResponse("welcome")
    resp.set_cookie("sessionid", request.POST["sid"])  # vulnerable
    return resp


def django_login_secure(request):
    resp = HttpResponse("welcome")
    resp.set_cookie("sessionid", request.POST["sid"], secure=True, httponly=True)  # safe
    return resp


def django_user(request, name):
    resp = HttpResponse("hi")
    resp.set_cookie("user", name, secure=True)  # vulnerable
    return resp


def django_user_secure(request, name):
    resp = HttpResponse("hi")
    resp.set_cookie("user", name, secure=True, httponly=True)  # safe
    return resp


@api.get("/auth")
def auth(response: Response, value: str):
    response.set_cookie("auth", value)  # vulnerable
    return {}


@api.get("/auth-secure")
def auth_secure(response: Response, value: str):
    response.set_cookie("auth", value, secure=True, httponly=True)  # safe
    return {}


@api.get("/jwt")
def jwt(response: Response, token: str):
    response.set_cookie(key="jwt", value=token, httponly=True, secure=False)  # vulnerable
    return {}


@api.get("/jwt-secure")
def jwt_secure(response: Response, token: str):
    response.set_cookie(key="jwt", value=token, httponly=True, secure=True)  # safe
    return {}


@api.get("/lang")
def lang(response: Response):
    response.set_cookie("lang", "fr")  # safe
    return {}


def remember_cookie(resp, who):
    resp.set_cookie("remember", who)  # vulnerable


@app.route("/helper")
def helper():
    resp = make_response("ok")
    remember_cookie(resp, request.args["who"])
    return resp


@app.route("/helper-secure")
def helper_secure():
    resp = make_response("ok")
    resp.set_cookie("remember", request.args["who"], httponly=True, secure=True, samesite="Strict")  # safe
    return resp


def django_remember(request):
    resp = HttpResponse("ok")
    resp.set_cookie("remember_token", request.COOKIES.get("t", ""), httponly=True, secure=False)  # vulnerable
    return resp
